import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ImageGenerationRequest } from '../../src/domain/image.ts';
import { Secret } from '../../src/domain/secret.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { sniffMediaType } from '../../src/media/media-type.ts';
import { createArkAdapter } from '../../src/providers/ark/ark-adapter.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import type { ImageAdapter, ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { fakeArkKey, startArkFake } from '../fakes/ark-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import { tinyPngBase64 } from '../support/image-jobs.ts';

/**
 * The one suite every image adapter runs: images with usage, the provider's own error status and body, an
 * answer that breaks the protocol, a provider that hangs, a partly failed group, layers, reference images.
 * A case an adapter cannot exercise is skipped with its reason.
 */
interface Subject {
  name: string;
  images(http: UpstreamHttp): ImageAdapter;
  fake?: () => Promise<FakeServer>;
  target(fake: FakeServer | undefined): ProviderTarget;
  model: string;
  layerModel?: string;
  /** Why the network cases do not apply, when they do not. */
  noNetwork?: string;
  /** Why a partly failed group cannot happen, when it cannot. */
  noPartialGroups?: string;
}

const target = (baseUrl: string, apiKey: string, timeoutMs = 2_000): ProviderTarget => ({
  baseUrl,
  apiKey: new Secret(apiKey),
  timeoutMs,
  firstByteTimeoutMs: timeoutMs,
  connectTimeoutMs: 2_000,
  maxEventCharacters: 1024 * 1024,
  headers: {},
});

const subjects: Subject[] = [
  {
    name: 'ark',
    images: (http) => createArkAdapter(http).images!,
    fake: startArkFake,
    target: (fake) => target(`${fake!.url}/api/v3`, fakeArkKey),
    model: 'seedream-4-0-250828',
    layerModel: 'seedream-5-0-260128',
  },
  {
    name: 'openai',
    images: (http) => createOpenAiAdapter(http).images!,
    fake: startOpenAiFake,
    target: (fake) => target(`${fake!.url}/v1`, fakeOpenAiKey),
    model: 'gpt-image-1',
    noPartialGroups: 'OpenAI answers a whole request or an error: its images do not fail one by one',
  },
  {
    name: 'sandbox',
    images: () => sandboxAdapter.images!,
    target: () => target('', ''),
    model: 'image',
    layerModel: 'image-layers',
    noNetwork: 'the sandbox answers in process: it has no upstream to fail or hang',
    noPartialGroups: 'the sandbox makes every image it is asked for',
  },
];

const request = (
  upstreamModel: string,
  prompt: string,
  extra: Partial<ImageGenerationRequest> = {},
): ImageGenerationRequest => ({ upstreamModel, prompt, images: [], numberOfImages: 2, ...extra });

for (const subject of subjects) {
  describe(`image adapter contract: ${subject.name}`, () => {
    const http = new UpstreamHttp(16);
    let fake: FakeServer | undefined;
    let adapter: ImageAdapter;

    beforeAll(async () => {
      fake = await subject.fake?.();
      adapter = subject.images(http);
    });
    afterAll(async () => {
      await http.close();
      await fake?.close();
    });

    it('makes the images asked for, as URLs or PNG bytes, with the usage it reports', async () => {
      const result = await adapter.generate(request(subject.model, 'two boats'), { target: subject.target(fake) });
      expect(result.images).toHaveLength(2);
      expect(result.failures).toEqual([]);
      expect(result.usage.generatedImages).toBe(2);
      for (const image of result.images) {
        if (image.output.kind === 'inline')
          expect(sniffMediaType(Buffer.from(image.output.data, 'base64'))).toBe('image/png');
        else if (image.output.kind === 'url') expect(URL.canParse(image.output.url)).toBe(true);
      }
    });

    it('takes a reference image', async () => {
      const result = await adapter.generate(
        request(subject.model, 'like this', {
          numberOfImages: 1,
          images: [{ kind: 'inline', mediaType: 'image/png', data: tinyPngBase64 }],
        }),
        { target: subject.target(fake) },
      );
      expect(result.images).toHaveLength(1);
    });

    it.skipIf(subject.noNetwork)(
      `relays the provider's own error status and body ${subject.noNetwork ? `(skipped: ${subject.noNetwork})` : ''}`,
      async () => {
        const failure = await adapter
          .generate(request(subject.model, 'refused fake-error-400'), { target: subject.target(fake) })
          .catch((error: unknown) => error);
        expect(failure).toBeInstanceOf(UpstreamHttpError);
        expect((failure as UpstreamHttpError).status).toBe(400);
        expect(JSON.parse((failure as UpstreamHttpError).body)).toMatchObject({
          error: { message: 'The fake failed with 400' },
        });
        const unavailable = await adapter
          .generate(request(subject.model, 'down fake-error-503'), { target: subject.target(fake) })
          .catch((error: unknown) => error);
        expect((unavailable as UpstreamHttpError).status).toBe(503);
      },
    );

    it.skipIf(subject.noNetwork)(
      'an answer that breaks the protocol, and a provider that hangs, are upstream failures',
      async () => {
        await expect(
          adapter.generate(request(subject.model, 'junk fake-garbage'), { target: subject.target(fake) }),
        ).rejects.toMatchObject({ reason: 'protocol' });
        const hung = await adapter
          .generate(request(subject.model, 'stuck fake-hang'), {
            target: { ...subject.target(fake), timeoutMs: 300, firstByteTimeoutMs: 300 },
          })
          .catch((error: unknown) => error);
        expect(hung).toBeInstanceOf(UpstreamUnreachableError);
        expect((hung as UpstreamUnreachableError).reason).toBe('timeout');
      },
    );

    it.skipIf(subject.noPartialGroups)(
      `reports the failed images of a group beside the others ${subject.noPartialGroups ? `(skipped: ${subject.noPartialGroups})` : ''}`,
      async () => {
        const result = await adapter.generate(request(subject.model, 'group fake-partial', { numberOfImages: 3 }), {
          target: subject.target(fake),
        });
        expect(result.images).toHaveLength(2);
        expect(result.failures).toEqual([
          { index: 2, code: 'OutputImageSensitiveContentDetected', message: expect.any(String) },
        ]);
      },
    );

    it.skipIf(subject.name !== 'ark')(
      `streams image by image, then the usage ${subject.name === 'ark' ? '' : '(skipped: the family answers whole, it has no image events)'}`,
      async () => {
        expect(adapter.stream).toBeDefined();
        const events: string[] = [];
        for await (const event of adapter.stream!(
          request(subject.model, 'streamed fake-partial', { numberOfImages: 3 }),
          { target: subject.target(fake) },
        ))
          events.push(event.type);
        expect(events).toEqual(['image', 'image', 'failure', 'finish']);
        const cut = adapter.stream!(request(subject.model, 'junk fake-garbage'), { target: subject.target(fake) });
        await expect(
          (async () => {
            for await (const _ of cut);
          })(),
        ).rejects.toMatchObject({ reason: 'protocol' });
      },
    );

    it.skipIf(!subject.layerModel)(
      `splits an image into a base and layers ${subject.layerModel ? '' : '(skipped: the family has no layer decomposition)'}`,
      async () => {
        const result = await adapter.generate(
          request(subject.layerModel!, 'split', {
            numberOfImages: 1,
            images: [{ kind: 'inline', mediaType: 'image/png', data: tinyPngBase64 }],
            layers: { resolution: 'auto' },
          }),
          { target: subject.target(fake) },
        );
        expect(adapter.layers).toBe(true);
        const [base, ...layers] = result.images;
        expect(base!.layer).toEqual({ zIndex: 0 });
        expect(layers.length).toBeGreaterThan(0);
        for (const layer of layers) {
          expect(layer.layer!.zIndex).toBeGreaterThan(0);
          expect(layer.layer!.box).toHaveLength(4);
          expect(typeof layer.layer!.name).toBe('string');
        }
      },
    );
  });
}
