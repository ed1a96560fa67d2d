import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeSpeechKey } from '../fakes/speech-fake.ts';
import { fakeProviderYaml } from './test-gateway.ts';

/**
 * gateway.yaml of one model of each media kind on the fakes (images and video on ModelArk, speech on the speech
 * fake, with one voice), for tests of the job worker; `jobs` is the file's `jobs` line.
 */
export function mediaJobCatalog({ ark, speech, jobs }: { ark: FakeServer; speech: FakeServer; jobs: string }): string {
  return [
    'providers:',
    fakeProviderYaml('ark', 'ark', ark),
    `  speech: { protocol: speech, baseUrl: "${speech.url}", apiKey: ${fakeSpeechKey} }`,
    'models:',
    '  - { id: seedream, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
    '  - { id: seedance, outputModalities: [video], pricing: { perVideoSecond: 0.05 }, providers: [{ provider: ark, model: seedance-1-0-pro-250528 }] }',
    '  - { id: seed-tts-1.0, outputModalities: [audio], pricing: { perMCharacters: 60 }, providers: [{ provider: speech, model: seed-tts-1.0 }] }',
    'voices:',
    '  - { voiceType: zh_female_cancan_mars_bigtts, name: Cancan, gender: female, age: adult, categories: [General], languages: [{ language: zh-CN, text: 你好 }], resourceId: seed-tts-1.0 }',
    jobs,
  ].join('\n');
}
