/**
 * Video models for configurations' `models:` lines: Seedance on a provider named `ark` (its durations,
 * resolutions, ratios and camera setting bounded, one strict model priced per second with duration steps), and
 * the sandbox's video model on `sandbox`, priced by resolution.
 */
export const seedanceModel = [
  '  - id: seedance',
  '    outputModalities: [video]',
  '    pricing: { perVideoSecondByResolution: { 480p: 0.02, 720p: 0.05, 1080p: 0.12 } }',
  '    providers:',
  '      - provider: ark',
  '        model: seedance-1-0-pro-250528',
  '        capabilities:',
  '          video:',
  '            params:',
  '              duration: { type: int, min: 2, max: 12, default: 5 }',
  '              resolution: { type: enum, values: [480p, 720p, 1080p], default: 1080p }',
  '              ratio: { type: enum, values: ["16:9", "9:16", "1:1", adaptive] }',
  '              cameraFixed: { type: bool }',
  '  - id: seedance-steps',
  '    outputModalities: [video]',
  '    pricing: { perVideoSecond: 0.1 }',
  '    providers:',
  '      - provider: ark',
  '        model: seedance-1-0-lite-t2v-250428',
  '        capabilities: { strictParams: true, video: { params: { duration: { type: range, min: 5, max: 10, steps: [5, 10] } } } }',
].join('\n');

export const sandboxVideoModel = [
  '  - id: sandbox-video',
  '    outputModalities: [video]',
  '    pricing: { perVideoSecondByResolution: { 480p: 0.001, 720p: 0.002 } }',
  '    providers:',
  '      - provider: sandbox',
  '        model: video',
  '        capabilities:',
  '          video:',
  '            params:',
  '              duration: { type: int, min: 1, max: 10, default: 5 }',
  '              resolution: { type: enum, values: [480p, 720p], default: 480p }',
].join('\n');

/** The alpha surface's video models: Veo through a routing provider named `router` (4 to 8 s), and the sandbox's. */
export const alphaVideoModelsYaml = [
  '  - id: veo',
  '    outputModalities: [video]',
  '    pricing: { perVideoSecondByResolution: { 720p: 0.1, 1080p: 0.2 } }',
  '    providers: [{ provider: router, model: google/veo-3.1, capabilities: { video: { params: { duration: { type: int, min: 4, max: 8 } } } } }]',
  '  - { id: sandbox-video, outputModalities: [video], pricing: { perVideoSecond: 0.001 }, providers: [{ provider: sandbox, model: video }] }',
].join('\n');
