import { describe, expect, it } from 'vitest';
import type { VideoTaskView } from '../../src/gateway/video-generation.ts';
import { alphaVideoJob, decodeAlphaVideo, formBody } from '../../src/surfaces/alpha/videos-codec.ts';

/** The alpha videos codec on its own: the SDKs' form and JSON bodies to the native input, a task back as a job. */
describe('an alpha video request', () => {
  it("reads the SDKs' multipart form as the JSON body: nested fields as one object, in prototype-less objects", () => {
    const body = formBody([
      { name: 'model', value: 'veo' },
      { name: 'prompt', value: 'waves' },
      { name: 'seconds', value: '8' },
      { name: 'input_reference[image_url]', value: 'https://example.com/a.png' },
      { name: 'input_reference[file_id]', value: 'file-1' },
    ]);
    expect({ ...body }).toEqual({
      model: 'veo',
      prompt: 'waves',
      seconds: '8',
      input_reference: { image_url: 'https://example.com/a.png', file_id: 'file-1' },
    });
    expect(Object.getPrototypeOf(body)).toBeNull();
    expect(Object.getPrototypeOf(body.input_reference)).toBeNull();
  });

  it('refuses a form field given twice, naming it, rather than keeping one of its values silently', () => {
    for (const name of ['model', 'input_reference[image_url]']) {
      const twice = () =>
        formBody([
          { name: 'prompt', value: 'waves' },
          { name, value: 'https://example.com/a.png' },
          { name, value: 'https://example.com/b.png' },
        ]);
      expect(twice).toThrow(
        expect.objectContaining({ code: 'GW_VALIDATION', message: expect.stringContaining(`"${name}"`) }),
      );
    }
  });

  it('maps seconds (a string of digits or an integer) to the duration, size to resolution and ratio, the image to a reference', () => {
    const input = decodeAlphaVideo(
      formBody([
        { name: 'model', value: 'veo' },
        { name: 'prompt', value: 'waves at night' },
        { name: 'seconds', value: '8' },
        { name: 'size', value: '1024x1792' },
        { name: 'input_reference[image_url]', value: 'https://example.com/a.png' },
      ]),
    );
    expect(input).toEqual({
      modelId: 'veo',
      content: [
        { type: 'text', text: 'waves at night' },
        { type: 'imageUrl', url: 'https://example.com/a.png', role: 'referenceImage' },
      ],
      duration: 8,
      resolution: '1080p',
      ratio: '9:16',
      fieldNames: { duration: 'seconds', resolution: 'size', ratio: 'size' },
      partFields: new Map([[1, 'input_reference.image_url']]),
    });
    expect(decodeAlphaVideo({ model: 'veo', prompt: 'p', seconds: 4, size: '1280x720' })).toMatchObject({
      duration: 4,
      resolution: '720p',
      ratio: '16:9',
    });
  });

  it('leaves out every generation field the client did not send', () => {
    expect(decodeAlphaVideo({ model: 'veo', prompt: 'p' })).toEqual({
      modelId: 'veo',
      content: [{ type: 'text', text: 'p' }],
      fieldNames: { duration: 'seconds', resolution: 'size', ratio: 'size' },
    });
  });
});

describe("a video task as the routing provider's job", () => {
  const task: VideoTaskView = {
    taskId: 'vt_1',
    generationId: 'gen_1',
    providerId: 'ark',
    status: 'queued',
    model: 'veo',
    content: [],
    createdAt: '2026-11-27T06:00:00.000Z',
    updatedAt: '2026-11-27T06:00:00.000Z',
  };
  const base = 'https://gateway.example/api/alpha/v1';

  it('names the states as the job does, and polls at this surface', () => {
    const states = (['queued', 'running', 'succeeded', 'failed', 'cancelled'] as const).map(
      (status) => alphaVideoJob({ ...task, status }, base).status,
    );
    expect(states).toEqual(['pending', 'in_progress', 'completed', 'failed', 'cancelled']);
    expect(alphaVideoJob(task, base)).toEqual({
      id: 'vt_1',
      polling_url: `${base}/videos/vt_1`,
      status: 'pending',
      generation_id: 'gen_1',
      model: 'veo',
    });
  });

  it('gives a completed job its content link at this surface and its cost in USD', () => {
    const job = alphaVideoJob(
      {
        ...task,
        status: 'succeeded',
        usage: { completionTokens: 1, totalTokens: 1, usdCost: 0.42, durationSeconds: 5, providerUsage: {} },
      },
      base,
    );
    expect(job).toMatchObject({
      status: 'completed',
      unsigned_urls: [`${base}/videos/vt_1/content?index=0`],
      usage: { cost: 0.42, is_byok: false },
    });
    expect(alphaVideoJob({ ...task, status: 'succeeded' }, base).usage).toEqual({ cost: 0, is_byok: false });
  });

  it('gives a failed job its error string and no content link', () => {
    const job = alphaVideoJob({ ...task, status: 'failed', error: 'the provider could not make it' }, base);
    expect(job).toMatchObject({ status: 'failed', error: 'the provider could not make it' });
    expect(job).not.toHaveProperty('unsigned_urls');
    expect(job).not.toHaveProperty('usage');
  });
});
