import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createArkAdapter } from '../../src/providers/ark/ark-adapter.ts';
import type { ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { fakeArkKey, startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import {
  askFake,
  replayed,
  requestBody,
  shapeDifferences,
  type VendorFixture,
  vendorFixture,
} from '../support/vendor-fixtures.ts';

/**
 * ModelArk answers built from the vendor's SDK response types (test/fixtures/vendor/ark; each note says which
 * type and commit: no example answer of the vendor's could be read at the source) replayed from a loopback
 * upstream against the Ark adapter, and the Ark fake held to their shapes.
 */
const fixture = (name: string) => vendorFixture('ark', name);
const http = new UpstreamHttp();
const adapter = createArkAdapter(http);
afterAll(() => http.close());

const onArk = <T>(recorded: VendorFixture, call: (target: ProviderTarget) => Promise<T>) =>
  replayed(recorded, '/api/v3', call);

const sdkExamplePrompt = '龙与地下城女骑士背景是起伏的平原，目光从镜头转向平原';

describe('ModelArk answers replayed against the Ark adapter', () => {
  it('sends one multimodal embedding call and takes its one fused vector with its prompt tokens', async () => {
    const recorded = fixture('multimodal-embeddings');
    const asked = requestBody(recorded);
    const { result, sent } = await onArk(recorded, (target) =>
      adapter.embeddings!.embed(
        {
          upstreamModel: String(asked.model),
          inputs: [
            {
              parts: [
                { type: 'text', text: 'What is the weather like today?' },
                { type: 'imageUrl', url: 'https://ark-project.tos-cn-beijing.volces.com/images/view.jpeg' },
              ],
            },
          ],
        },
        { target },
      ),
    );
    expect(sent).toHaveLength(1);
    expect(sent[0]).toMatchObject({ method: 'POST', path: recorded.request.path });
    expect(sent[0]?.body).toEqual({ ...asked, encoding_format: 'float' });
    expect(result).toEqual({ vectors: [[-0.0189, 0.0293, -0.0117]], inputTokens: 528 });
  });

  it('takes the image answer as one image at its URL, with its size and usage', async () => {
    const recorded = fixture('images-url');
    const { result, sent } = await onArk(recorded, (target) =>
      adapter.images!.generate(
        {
          upstreamModel: 'seedream-model',
          prompt: sdkExamplePrompt,
          images: [],
          numberOfImages: 1,
          size: '1024x1024',
          watermark: true,
        },
        { target },
      ),
    );
    expect(sent[0]).toMatchObject({ method: 'POST', path: recorded.request.path });
    expect(sent[0]?.body).toMatchObject({
      model: 'seedream-model',
      prompt: sdkExamplePrompt,
      size: '1024x1024',
      watermark: true,
    });
    expect(result).toEqual({
      images: [{ output: { kind: 'url', url: 'https://ark.example/generated/0.jpeg' }, size: '1024x1024' }],
      failures: [],
      usage: { generatedImages: 1, outputTokens: 4096, totalTokens: 4096 },
    });
  });

  it("reads the SDK's layer decomposition answer: the base image, and each layer with its box in pixels", async () => {
    const recorded = fixture('images-layers');
    const { result, sent } = await onArk(recorded, (target) =>
      adapter.images!.generate(
        {
          upstreamModel: 'seedream-model',
          images: [{ kind: 'url', url: 'https://ark.example/inputs/poster.png' }],
          numberOfImages: 1,
          layers: { resolution: '2K' },
        },
        { target },
      ),
    );
    // The request asks for layers as the SDK does: a boolean.
    expect(sent[0]?.body).toMatchObject({ layer_decomposition: true, image: 'https://ark.example/inputs/poster.png' });
    expect(result.images.map((image) => image.layer)).toEqual([
      { zIndex: 0 },
      { zIndex: 1, box: [100, 200, 740, 680], name: 'title', description: "the poster's title lettering" },
    ]);
  });

  it('creates a video task and takes the id of the answer', async () => {
    const recorded = fixture('video-task-create');
    const { result, sent } = await onArk(recorded, (target) =>
      adapter.video!.createTask(
        {
          content: [
            { type: 'text', text: sdkExamplePrompt },
            {
              type: 'image',
              role: 'firstFrame',
              source: { kind: 'url', url: 'https://ark.example/inputs/first.png' },
            },
          ],
        },
        'seedance-model',
        { target },
      ),
    );
    expect(sent[0]).toMatchObject({ method: 'POST', path: recorded.request.path });
    expect(sent[0]?.body).toMatchObject({ model: 'seedance-model' });
    expect(result).toBe('cgt-20250331175019-68d9t');
  });

  it('reads a succeeded task as its video URL with its length, resolution and tokens', async () => {
    const recorded = fixture('video-task-succeeded');
    const { result, sent } = await onArk(recorded, (target) =>
      adapter.video!.poll('cgt-20250331175019-68d9t', { target }),
    );
    expect(sent[0]).toMatchObject({ method: 'GET', path: recorded.request.path });
    expect(result).toEqual({
      state: 'succeeded',
      durationSeconds: 5,
      resolution: '720p',
      completionTokens: 108_900,
      totalTokens: 108_900,
      providerUsage: { completion_tokens: 108_900, total_tokens: 108_900 },
      video: { kind: 'url', url: 'https://ark.example/generated/video.mp4' },
    });
  });

  it('reads a failed task with its error message', async () => {
    const { result } = await onArk(fixture('video-task-failed'), (target) =>
      adapter.video!.poll('cgt-20250331175019-68d9t', { target }),
    );
    expect(result).toEqual({ state: 'failed', error: 'The generated video may contain sensitive information.' });
  });
});

describe('the Ark fake answers with the fields of the SDK types', () => {
  let fake: FakeServer;
  beforeAll(async () => {
    fake = await startArkFake();
  });
  afterAll(() => fake.close());
  const headers = { authorization: `Bearer ${fakeArkKey}` };
  const bodyOf = (text: string): unknown => JSON.parse(text);

  it('answers a multimodal embedding call as MultimodalEmbeddingResponse', async () => {
    const recorded = fixture('multimodal-embeddings');
    const answer = await askFake(fake, recorded, { headers });
    expect(answer.status).toBe(200);
    expect(shapeDifferences([recorded.response.body], [bodyOf(answer.text)], { opaque: ['$.data.embedding'] })).toEqual(
      [],
    );
  });

  it('answers an image generation as ImagesResponse', async () => {
    const recorded = fixture('images-url');
    const answer = await askFake(fake, recorded, { headers });
    expect(answer.status).toBe(200);
    expect(shapeDifferences([recorded.response.body], [bodyOf(answer.text)])).toEqual([]);
  });

  it('answers a layer decomposition with the base image and layers of Image, each layer with its BoundingBox', async () => {
    const recorded = fixture('images-layers');
    const answer = await askFake(fake, recorded, { headers });
    expect(answer.status).toBe(200);
    const layered = bodyOf(answer.text);
    expect(layered).toMatchObject({ data: [{ z_index: 0 }, { z_index: 1 }, { z_index: 2 }, { z_index: 3 }] });
    expect(shapeDifferences([recorded.response.body], [layered])).toEqual([]);
  });

  /** Creates a task on the fake (the fixture's request, or `body`) and reads it until `status` (at most 5 reads). */
  const fakeTask = async (status: string, body?: unknown) => {
    const create = fixture('video-task-create');
    const created = await askFake(fake, create, { headers, ...(body === undefined ? {} : { body }) });
    const task = bodyOf(created.text);
    const id = typeof task === 'object' && task !== null && 'id' in task ? String(task.id) : '';
    const path = `/api/v3/contents/generations/tasks/${encodeURIComponent(id)}`;
    const read = fixture('video-task-succeeded');
    let polled = await askFake(fake, read, { headers, path });
    for (let reads = 1; reads < 5 && !polled.text.includes(`"${status}"`); reads++)
      polled = await askFake(fake, read, { headers, path });
    return { created: { status: created.status, body: task }, ended: bodyOf(polled.text) };
  };

  it('answers a task creation as ContentGenerationTaskID and a task read to its end as ContentGenerationTask', async () => {
    const { created, ended } = await fakeTask('succeeded');
    expect(created.status).toBe(200);
    expect(ended).toMatchObject({ status: 'succeeded' });
    expect(shapeDifferences([fixture('video-task-create').response.body], [created.body])).toEqual([]);
    expect(
      shapeDifferences([fixture('video-task-succeeded').response.body], [ended], {
        optional: {
          '$.frames': 'the adapter reads the duration, not the frame count',
          '$.revised_prompt': 'the fake does not rewrite prompts',
          '$.service_tier': 'omitempty in the type; the gateway never sends it, so the fake does not echo it',
          '$.execution_expires_after': 'omitempty in the type; the gateway never sends it',
          '$.priority': 'omitempty in the type; the gateway never sends it',
          '$.generate_audio': 'omitempty in the type; the fake leaves it out',
        },
        extra: {
          '$.error': 'the fake writes error: null on every task; the type has it omitempty (a null decodes as absent)',
        },
      }),
    ).toEqual([]);
  });

  it('answers a task that failed with the error of ContentGenerationError', async () => {
    const create = fixture('video-task-create');
    const { ended } = await fakeTask('failed', {
      ...requestBody(create),
      content: [{ type: 'text', text: 'fake-video-fail' }],
    });
    const failed = fixture('video-task-failed');
    const errorOf = (value: unknown) =>
      typeof value === 'object' && value !== null && 'error' in value ? value.error : undefined;
    expect(ended).toMatchObject({ status: 'failed' });
    expect(shapeDifferences([errorOf(failed.response.body)], [errorOf(ended)])).toEqual([]);
  });
});
