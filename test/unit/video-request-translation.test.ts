import { describe, expect, it } from 'vitest';
import type { VideoGenerationRequest } from '../../src/domain/video.ts';
import { seedanceBody, seedanceReport } from '../../src/providers/ark/ark-video.ts';
import { routerVideoBody, routerVideoReport } from '../../src/providers/openai/router-videos.ts';

/**
 * One canonical video request written as each video protocol's create body, and each protocol's job read back
 * as the canonical report, without HTTP.
 */
const request: VideoGenerationRequest = {
  content: [
    { type: 'text', text: 'A paper boat drifts down a rainy street.' },
    { type: 'image', role: 'firstFrame', source: { kind: 'url', url: 'https://example.com/first.png' } },
    { type: 'image', role: 'lastFrame', source: { kind: 'inline', mediaType: 'image/png', data: 'iVBORw0K' } },
    { type: 'text', text: 'Slow camera.' },
    { type: 'image', role: 'referenceImage', source: { kind: 'url', url: 'https://example.com/boat.png' } },
    { type: 'video', source: { kind: 'url', url: 'https://example.com/rain.mp4' } },
  ],
  duration: 5,
  resolution: '720p',
  ratio: '16:9',
  seed: 42,
  generateAudio: true,
};

describe('a video request as a Seedance task', () => {
  it('keeps the content in order, names every image role (a reference too) and uses the wire names of the fields', () => {
    expect(seedanceBody({ ...request, cameraFixed: true, watermark: false }, 'seedance-1-0-pro')).toEqual({
      model: 'seedance-1-0-pro',
      content: [
        { type: 'text', text: 'A paper boat drifts down a rainy street.' },
        { type: 'image_url', image_url: { url: 'https://example.com/first.png' }, role: 'first_frame' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' }, role: 'last_frame' },
        { type: 'text', text: 'Slow camera.' },
        { type: 'image_url', image_url: { url: 'https://example.com/boat.png' }, role: 'reference_image' },
        { type: 'video_url', video_url: { url: 'https://example.com/rain.mp4' }, role: 'reference_video' },
      ],
      ratio: '16:9',
      resolution: '720p',
      duration: 5,
      seed: 42,
      camera_fixed: true,
      watermark: false,
      generate_audio: true,
    });
  });

  it('sends no field the request leaves out', () => {
    expect(seedanceBody({ content: [{ type: 'text', text: 'x' }] }, 'm')).toEqual({
      model: 'm',
      content: [{ type: 'text', text: 'x' }],
    });
  });

  it('reads a succeeded task as its video URL, length, resolution and tokens, keeping the usage as reported', () => {
    expect(
      seedanceReport({
        id: 'cgt-1',
        status: 'succeeded',
        content: { video_url: 'https://ark.example/video.mp4' },
        usage: { completion_tokens: 108_900, total_tokens: 108_900 },
        duration: 5,
        resolution: '720p',
      }),
    ).toEqual({
      state: 'succeeded',
      video: { kind: 'url', url: 'https://ark.example/video.mp4' },
      durationSeconds: 5,
      resolution: '720p',
      completionTokens: 108_900,
      totalTokens: 108_900,
      providerUsage: { completion_tokens: 108_900, total_tokens: 108_900 },
    });
  });

  it("reads a task's end without success as its error: the message, else the code, else what the status says", () => {
    expect(
      seedanceReport({ id: 't', status: 'failed', error: { code: 'InputTextSensitive', message: 'refused' } }),
    ).toEqual({ state: 'failed', error: 'refused' });
    expect(seedanceReport({ id: 't', status: 'failed', error: { code: 'InternalServiceError' } }).error).toBe(
      'InternalServiceError',
    );
    expect(seedanceReport({ id: 't', status: 'expired', error: null }).error).toBe(
      'the task expired at the provider before it finished',
    );
    expect(seedanceReport({ id: 't', status: 'cancelled' }).error).toBe('the provider reports the task cancelled');
    expect(seedanceReport({ id: 't', status: 'running', usage: null })).toEqual({ state: 'running' });
  });
});

describe("a video request as the routing provider's job", () => {
  it('joins the prompt texts, sends first and last frames by type, other images and videos as references', () => {
    expect(routerVideoBody(request, 'google/veo-3.1')).toEqual({
      model: 'google/veo-3.1',
      prompt: 'A paper boat drifts down a rainy street.\n\nSlow camera.',
      frame_images: [
        { type: 'image_url', image_url: { url: 'https://example.com/first.png' }, frame_type: 'first_frame' },
        { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0K' }, frame_type: 'last_frame' },
      ],
      input_references: [
        { type: 'image_url', image_url: { url: 'https://example.com/boat.png' } },
        { type: 'video_url', video_url: { url: 'https://example.com/rain.mp4' } },
      ],
      duration: 5,
      resolution: '720p',
      aspect_ratio: '16:9',
      seed: 42,
      generate_audio: true,
    });
  });

  it('sends no prompt, frames or references when the request has none', () => {
    expect(
      routerVideoBody(
        {
          content: [
            { type: 'image', role: 'referenceImage', source: { kind: 'url', url: 'https://example.com/a.png' } },
          ],
        },
        'm',
      ),
    ).toEqual({
      model: 'm',
      input_references: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }],
    });
  });

  it("maps the job's states, and reads a completed job's first URL as one read with the provider's key", () => {
    expect(routerVideoReport({ id: 'j', status: 'pending' })).toEqual({ state: 'queued' });
    expect(routerVideoReport({ id: 'j', status: 'in_progress' })).toEqual({ state: 'running' });
    expect(
      routerVideoReport({
        id: 'j',
        status: 'completed',
        unsigned_urls: ['https://router.example/v/j/content?index=0', 'https://router.example/v/j/content?index=1'],
        usage: { cost: 0.25, is_byok: false },
      }),
    ).toEqual({
      state: 'succeeded',
      video: { kind: 'url', url: 'https://router.example/v/j/content?index=0' },
      videoNeedsCredentials: true,
      providerUsage: { cost: 0.25, is_byok: false },
    });
  });

  it("reads a failed, cancelled or expired job with its error string, or the status's own words", () => {
    expect(routerVideoReport({ id: 'j', status: 'failed', error: 'Content policy violation' })).toEqual({
      state: 'failed',
      error: 'Content policy violation',
    });
    expect(routerVideoReport({ id: 'j', status: 'failed', error: null }).error).toBe(
      'the provider reports the video failed',
    );
    expect(routerVideoReport({ id: 'j', status: 'expired' })).toEqual({
      state: 'expired',
      error: 'the provider reports the video expired',
    });
    expect(routerVideoReport({ id: 'j', status: 'cancelled' }).state).toBe('cancelled');
  });
});
