import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { submissionsOf } from '../fakes/fake-images.ts';
import { freePort } from '../support/free-port.ts';
import { heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { balanceNanosOf, startImageFamilyGateway, type ImageFamilyGateway } from '../support/image-jobs.ts';

const pngSignature = Buffer.from([0x89, 0x50, 0x4e, 0x47]);

describe('alpha images through the official openai SDK', () => {
  let gateway: ImageFamilyGateway;
  let openai: FakeServer;
  let address: string;

  beforeAll(async () => {
    // Links are made on the configured HOST:PORT, the address this test then listens on.
    const port = await freePort();
    gateway = await startImageFamilyGateway(
      [
        '  - { id: gpt-image, outputModalities: [image], pricing: { perImageByQuality: { low: 0.011, medium: 0.042, high: 0.167 } }, providers: [{ provider: openai, model: gpt-image-1 }] }',
        '  - { id: seedream, outputModalities: [image], pricing: { perImage: 0.03 }, providers: [{ provider: ark, model: seedream-4-0-250828 }] }',
        '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
      ],
      [],
      { PORT: String(port) },
    );
    openai = gateway.openai;
    address = await gateway.app.listen({ port, host: '127.0.0.1' });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });

  it('passes an OpenAI model through: the upstream answer as it came, charged per image at the quality rendered', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const answer = await client(key).images.generate({ model: 'gpt-image', prompt: 'a teapot', n: 2, quality: 'high' });
    expect(answer.data).toHaveLength(2);
    expect(Buffer.from(answer.data![0]!.b64_json!, 'base64').subarray(0, 4).equals(pngSignature)).toBe(true);
    expect(answer.usage?.output_tokens).toBe(544);
    const sent = openai.requests.find(
      (request) =>
        request.path === '/v1/images/generations' && (request.body as { prompt: string }).prompt === 'a teapot',
    )!.body;
    expect(sent).toMatchObject({ model: 'gpt-image-1', n: 2, quality: 'high' });
    await gateway.settled();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.167) * 2n);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('relays an answer larger than a text answer may be (images of megabytes), charged per image', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const answer = await client(key).images.generate({ model: 'gpt-image', prompt: 'huge fake-large', quality: 'low' });
    expect(answer.data![0]!.b64_json!.length).toBe(18 * 1024 * 1024);
    await gateway.settled();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.011));
  });

  it('relays a streamed answer event by event and charges each completed image', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const stream = await client(key).images.generate({
      model: 'gpt-image',
      prompt: 'a streamed kettle',
      n: 2,
      stream: true,
    });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    expect(types).toEqual([
      'image_generation.partial_image',
      'image_generation.completed',
      'image_generation.partial_image',
      'image_generation.completed',
    ]);
    await gateway.settled();
    // `auto` quality is rendered at medium by the fake, and charged so.
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.042) * 2n);
  });

  it('translates for ModelArk and the sandbox: a job waited for, answered as signed archive links or base64', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const byLink = await client(key).images.generate({
      model: 'seedream',
      prompt: 'a harbour',
      n: 2,
      size: '1024x1024',
      style: 'vivid',
    });
    expect(byLink.data).toHaveLength(2);
    for (const image of byLink.data!) {
      const download = await fetch(image.url!);
      expect(download.status).toBe(200);
      expect(
        Buffer.from(await download.arrayBuffer())
          .subarray(0, 4)
          .equals(pngSignature),
      ).toBe(true);
    }
    const inline = await client(key).images.generate({
      model: 'sandbox-image',
      prompt: 'a pebble',
      response_format: 'b64_json',
    });
    expect(Buffer.from(inline.data![0]!.b64_json!, 'base64').subarray(0, 4).equals(pngSignature)).toBe(true);
    await gateway.settled();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.06) - usdToNanos(0.001));
    const usage = await fetch(`${address}/api/compat/v1/usage`, { headers: { 'x-api-key': key } });
    const records = (await usage.json()) as { results: Array<{ modality: string; model: string }> };
    expect(records.results.map((record) => record.model).sort()).toEqual(['sandbox-image', 'seedream']);
    expect(records.results.every((record) => record.modality === 'image')).toBe(true);
  });

  it('names a quality or size a translated model cannot take among the dropped parameters, never dropping it silently', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    for (const model of ['seedream', 'sandbox-image']) {
      // dall-e-3's quality and an upper-case size: neither reaches the provider, so each is named.
      const { response } = await client(key)
        .images.generate({ model, prompt: 'a kite', quality: 'hd', size: '1024X1024' as never })
        .withResponse();
      expect(response.headers.get('x-gateway-dropped-parameters')?.split(',').sort()).toEqual(['quality', 'size']);
    }
    const { response } = await client(key)
      .images.generate({ model: 'seedream', prompt: 'a kite', size: '1024x1024' })
      .withResponse();
    expect(response.headers.get('x-gateway-dropped-parameters')).toBeNull();
    // Named as the client sent it, in the protocol's own spelling.
    const compressed = await client(key)
      .images.generate({ model: 'seedream', prompt: 'a kite', size: '1024x1024', output_compression: 50 })
      .withResponse();
    expect(compressed.response.headers.get('x-gateway-dropped-parameters')).toBe('output_compression');
  });

  it('streams ModelArk image events as OpenAI events, charging the images delivered', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const stream = await client(key).images.generate({
      model: 'seedream',
      prompt: 'streamed boats fake-partial',
      n: 3,
      stream: true,
    });
    const events: Array<{ type: string; b64_json?: string; usage?: { output_tokens: number } }> = [];
    for await (const event of stream) events.push(event as (typeof events)[number]);
    expect(events.map((event) => event.type)).toEqual(['image_generation.completed', 'image_generation.completed']);
    for (const event of events)
      expect(Buffer.from(event.b64_json!, 'base64').subarray(0, 4).equals(pngSignature)).toBe(true);
    expect(events[0]!.usage).toBeUndefined();
    expect(events[1]!.usage?.output_tokens).toBe(2 * 16_384);
    const sent = gateway.ark.requests.find(
      (request) => (request.body as { prompt?: string } | undefined)?.prompt === 'streamed boats fake-partial',
    )!.body;
    expect(sent).toMatchObject({ stream: true, sequential_image_generation_options: { max_images: 3 } });
    await gateway.settled();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1) - usdToNanos(0.06));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('fails a stream none of whose images is a picture as the same request unstreamed fails: 502, recorded failed, uncharged', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const request = { model: 'seedream', prompt: 'streamed pages fake-not-image', n: 2 } as const;
    const streamed: unknown = await client(key)
      .images.generate({ ...request, stream: true })
      .then(async (stream) => {
        for await (const event of stream) void event;
        return 'ended as if it had succeeded';
      })
      .catch((error: unknown) => error);
    const whole: unknown = await client(key)
      .images.generate(request)
      .catch((error: unknown) => error);
    for (const failure of [streamed, whole]) {
      expect(failure).toBeInstanceOf(OpenAI.APIError);
      expect(failure).toMatchObject({ status: 502 });
    }
    expect(String((streamed as Error).message)).toContain('the provider output is not an image');
    const records = await usageRecords(gateway, key);
    expect(records.map((record) => [record.status, record.usdCost])).toEqual([
      ['failed', 0],
      ['failed', 0],
    ]);
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it("relays the provider's own status and message when a job-backed model's provider refuses: no SDK retry, one provider call", async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const prompt = 'refused job fake-error-400';
    // The SDK's defaults: it retries a 5xx (a new job and a new provider call each time), never a 400.
    const sdk = new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1` });
    const failure: unknown = await sdk.images.generate({ model: 'seedream', prompt }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.APIError);
    expect(failure).toMatchObject({
      status: 400,
      message: '400 The fake failed with 400',
      error: { code: 'OutputImageSensitiveContentDetected', message: 'The fake failed with 400' },
    });
    expect(submissionsOf(gateway.ark.requests, '/api/v3/images/generations', prompt)).toBe(1);
    await gateway.settled();
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(1));
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('a refused request is an SDK error with the envelope, and an upstream error is relayed as it came', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    await expect(client(key).images.generate({ model: 'no-such-model', prompt: 'x' })).rejects.toMatchObject({
      status: 400,
    });
    await expect(
      client(key).images.generate({ model: 'gpt-image', prompt: 'broken fake-error-400' }),
    ).rejects.toMatchObject({ status: 400, error: { type: 'image_generation_user_error' } });
    const poor = await gateway.createFundedKey({ credits: 0.01 });
    await expect(client(poor.key).images.generate({ model: 'seedream', prompt: 'too dear' })).rejects.toMatchObject({
      status: 403,
    });
  });
});
