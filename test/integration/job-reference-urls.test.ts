import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, heldNanosOf, keyHeaders } from '../support/http-helpers.ts';
import { jobRowsOf, sandboxImageConfigYaml } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const videoModel =
  '  - { id: sandbox-video, outputModalities: [video], pricing: { perVideoSecond: 0.001 }, providers: [{ provider: sandbox, model: video }] }';
const config = (extra = '') => `${sandboxImageConfigYaml(videoModel)}\njobs: { idlePollMs: 50 }\n${extra}`;

/** URLs that name, or resolve to, an address outside the public internet; `localhost` resolves to loopback. */
const nonPublic = [
  'http://127.0.0.1/ref.png',
  'http://localhost:8080/ref.png',
  'http://[::1]/ref.png',
  'http://10.0.0.7/ref.png',
  'http://169.254.169.254/latest/meta-data/',
  'http://[::ffff:192.168.1.1]/ref.png',
];

const text = { type: 'text', text: 'a heron' };
const imageJob = (url: string) => ({ model: 'sandbox-image', content: [text, { type: 'imageUrl', url }] });

/**
 * Reference URLs of image and video jobs meet the rules of the URLs embeddings fetch (public http(s) addresses,
 * no credentials), before anything is held: 400 naming the field, no job, no hold.
 */
describe('reference URLs of media jobs', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: config() });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const post = (
    key: string,
    url: string,
    { payload, headers = {} }: { payload: unknown; headers?: Record<string, string> },
  ) =>
    gateway.request({
      method: 'POST',
      url,
      headers: { ...keyHeaders(key), ...headers },
      payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    });

  async function expectRefused(
    key: string,
    accountId: string,
    {
      route,
      payload,
      field,
      headers,
    }: { route: string; payload: unknown; field: string; headers?: Record<string, string> },
  ) {
    const envelope = expectEnvelope(
      await post(key, route, { payload, headers: { 'content-type': 'application/json', ...headers } }),
      { status: 400, code: 'GW_VALIDATION', path: route },
    );
    expect(envelope.errors[0]!.startsWith(`${field}: `), envelope.errors[0]).toBe(true);
    expect(await jobRowsOf(gateway, accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    return envelope.errors[0]!;
  }

  it.each(nonPublic)('refuses an image job referencing %s with 400 naming the part, before holding', async (url) => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const message = await expectRefused(key, accountId, {
      route: '/api/v1/image/generations/async',
      payload: imageJob(url),
      field: 'content[1]',
    });
    expect(message).toMatch(/is not a public address|resolves to a non-public address/);
  });

  it('refuses a reference URL with credentials in it', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const message = await expectRefused(key, accountId, {
      route: '/api/v1/image/generations/async',
      payload: imageJob('https://user:secret@example.com/ref.png'),
      field: 'content[1]',
    });
    expect(message).toBe('content[1]: https://example.com/ref.png is refused: URLs with credentials are not fetched');
  });

  it('refuses non-public image and video URLs of a native video job, naming the part', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const route = '/api/v1/video/generations';
    await expectRefused(key, accountId, {
      route,
      payload: {
        model: 'sandbox-video',
        content: [text, { type: 'imageUrl', url: 'http://127.0.0.1/first.png', role: 'firstFrame' }],
      },
      field: 'content[1]',
    });
    await expectRefused(key, accountId, {
      route,
      payload: { model: 'sandbox-video', content: [text, { type: 'videoUrl', url: 'http://localhost/clip.mp4' }] },
      field: 'content[1]',
    });
  });

  it('refuses a non-public input_reference.image_url on alpha videos, as JSON and as a multipart form', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const route = '/api/alpha/v1/videos';
    await expectRefused(key, accountId, {
      route,
      payload: {
        model: 'sandbox-video',
        prompt: 'x',
        input_reference: { image_url: 'http://169.254.169.254/latest/meta-data/' },
      },
      field: 'input_reference.image_url',
    });
    const boundary = 'boundary';
    const form = [
      ['model', 'sandbox-video'],
      ['prompt', 'x'],
      ['input_reference[image_url]', 'http://localhost/ref.png'],
    ]
      .map(([name, value]) => `--${boundary}\r\nContent-Disposition: form-data; name="${name}"\r\n\r\n${value}\r\n`)
      .join('');
    await expectRefused(key, accountId, {
      route,
      payload: `${form}--${boundary}--\r\n`,
      field: 'input_reference.image_url',
      headers: {
        'content-type': `multipart/form-data; boundary=${boundary}`,
      },
    });
  });

  it('looks no reference URL up for a key that could not pay for the job: refused as its hold would be', async () => {
    // Looking a host up is network work a client could ask for by the dozen: it waits for admission. A URL that
    // would be refused (localhost) shows the order: a lookup first would answer 400.
    const video = {
      model: 'sandbox-video',
      content: [text, { type: 'imageUrl', url: 'http://localhost/first.png', role: 'firstFrame' }],
    };
    const routes = [
      { route: '/api/v1/image/generations/async', payload: imageJob('http://localhost/ref.png') },
      { route: '/api/v1/video/generations', payload: video },
    ];
    const broke = await gateway.createFundedKey({ credits: 0 });
    const capped = await gateway.createFundedKey({ credits: 1, limits: { total: 0.000_000_001 } });
    for (const { route, payload } of routes) {
      const short = expectEnvelope(
        await post(broke.key, route, { payload, headers: { 'content-type': 'application/json' } }),
        { status: 403, code: 'GW_INSUFFICIENT_BALANCE', path: route },
      );
      // Refused as its hold would be, in the same words: what the job needs, and how much is free.
      expect(short.errors).toEqual([
        expect.stringMatching(
          /^insufficient credit balance: this request needs [\d.]+ USD of available credits; 0 USD is available$/,
        ),
      ]);
      expectEnvelope(await post(capped.key, route, { payload, headers: { 'content-type': 'application/json' } }), {
        status: 429,
        code: 'GW_SPEND_CAP_REACHED',
        path: route,
      });
    }
    expect(await jobRowsOf(gateway, capped.accountId)).toEqual([]);
    expect(await heldNanosOf(gateway, capped.accountId)).toBe(0n);
  });

  it('still takes public reference URLs (a name that does not resolve here is left to the fetch)', async () => {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const image = await post(key, '/api/v1/image/generations/async', {
      payload: imageJob('https://example.com/ref.png'),
      headers: {
        'content-type': 'application/json',
      },
    });
    expect(image.statusCode, image.body).toBe(202);
    const video = await post(key, '/api/v1/video/generations', {
      payload: {
        model: 'sandbox-video',
        content: [text, { type: 'imageUrl', url: 'https://93.184.215.14/first.png' }],
      },
      headers: { 'content-type': 'application/json' },
    });
    expect(video.statusCode, video.body).toBe(200);
    expect(await jobRowsOf(gateway, accountId)).toHaveLength(2);
  });
});

describe('reference URLs of media jobs with remoteMedia.allowPrivateAddresses', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText: config('remoteMedia: { allowPrivateAddresses: true }') });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('takes a loopback reference URL, as the operator allowed', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/v1/image/generations/async',
      headers: keyHeaders(key),
      payload: imageJob('http://127.0.0.1/ref.png'),
    });
    expect(response.statusCode, response.body).toBe(202);
  });
});
