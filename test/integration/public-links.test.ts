/**
 * Absolute links (download and polling) come from the configuration alone: PUBLIC_BASE_URL, or without it
 * `http://HOST:PORT`. A client's `Host` or forwarded headers never move them elsewhere, and the gateway warns
 * at start when it listens beyond loopback without PUBLIC_BASE_URL, and when its download links are served from
 * its own DATA_DIR/media (the filesystem store) while DATABASE_URL lets other processes archive media too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** What a client would send to make the gateway link elsewhere. */
const hostileHeaders = {
  host: 'evil.example:666',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'https',
  forwarded: 'host=evil.example;proto=https',
};

interface Links {
  image: string;
  video: string;
  audio: string;
  alphaPolling: string;
  alphaContent: string;
}

/** Runs one job of each kind through the sandbox (image, video, text-to-speech, alpha video) and returns their links, read with hostile headers. */
async function linksOf(gateway: TestGateway): Promise<Links> {
  const { key } = await gateway.createFundedKey({ credits: 5 });
  const headers = { ...keyHeaders(key), ...hostileHeaders };
  const call = async <T>(method: 'GET' | 'POST', url: string, payload?: Record<string, unknown>): Promise<T> => {
    const response = await gateway.request({ method, url, headers, ...(payload ? { payload } : {}) });
    expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
    return response.json<T>();
  };
  async function poll<T>(url: string, done: (body: T) => boolean): Promise<T> {
    for (let i = 0; i < 400; i++) {
      const body = await call<T>('GET', url);
      if (done(body)) return body;
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    throw new Error(`${url} did not end`);
  }
  const ended = (body: { status: string }) =>
    ['succeeded', 'failed', 'completed', 'cancelled', 'expired'].includes(body.status);

  const { generationId: imageId } = await call<{ generationId: string }>('POST', '/api/v1/image/generations/async', {
    model: 'sandbox-image',
    content: [{ type: 'text', text: 'a lighthouse' }],
  });
  const image = await poll<{ status: string; result?: { images: Array<{ downloadUrl: string }> } }>(
    `/api/v1/image/generations/async/${imageId}`,
    ended,
  );
  const { taskId } = await call<{ taskId: string }>('POST', '/api/v1/video/generations', {
    model: 'sandbox-video',
    content: [{ type: 'text', text: 'a paper boat' }],
    duration: 1,
  });
  const video = await poll<{ status: string; downloadUrl?: string }>(`/api/v1/video/tasks/${taskId}`, ended);
  const { generationId: audioId } = await call<{ generationId: string }>('POST', '/api/v1/audio/text-to-speech', {
    voiceType: 'zh_female_vv_uranus_bigtts',
    text: 'hello',
  });
  const audio = await poll<{ status: string; audioUrl?: string }>(`/api/v1/audio/generations/${audioId}`, ended);
  const created = await call<{ id: string; polling_url: string }>('POST', '/api/alpha/v1/videos', {
    model: 'sandbox-video',
    prompt: 'a heron',
    seconds: 1,
    size: '720x1280',
  });
  const alpha = await poll<{ status: string; polling_url: string; unsigned_urls?: string[] }>(
    `/api/alpha/v1/videos/${created.id}`,
    ended,
  );
  expect(alpha.polling_url).toBe(created.polling_url);
  return {
    image: image.result?.images[0]?.downloadUrl ?? `no image: ${JSON.stringify(image)}`,
    video: video.downloadUrl ?? `no video: ${JSON.stringify(video)}`,
    audio: audio.audioUrl ?? `no audio: ${JSON.stringify(audio)}`,
    alphaPolling: alpha.polling_url,
    alphaContent: alpha.unsigned_urls?.[0] ?? `no content link: ${JSON.stringify(alpha)}`,
  };
}

function expectLinksOn(links: Links, base: string): void {
  for (const [name, link] of Object.entries(links)) {
    expect(link.startsWith(`${base}/`), `${name}: ${link}`).toBe(true);
    expect(link, name).not.toContain('evil.example');
  }
}

const startWarnings = (lines: Array<Record<string, unknown>>) =>
  lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('PUBLIC_BASE_URL is not set'));

describe('links without PUBLIC_BASE_URL, listening beyond loopback', () => {
  let gateway: TestGateway;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    gateway = await startTestGateway({ env: { HOST: '0.0.0.0', PORT: '18080' }, logLines });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('makes every link on http://HOST:PORT of the configuration, whatever Host and forwarded headers say', async () => {
    expectLinksOn(await linksOf(gateway), 'http://0.0.0.0:18080');
  });

  it('warns at start that clients may not reach those links', () => {
    const warnings = startWarnings(logLines);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatchObject({ level: 40, host: '0.0.0.0', publicBaseUrl: 'http://0.0.0.0:18080' });
  });
});

describe('links with PUBLIC_BASE_URL', () => {
  let gateway: TestGateway;
  const logLines: Array<Record<string, unknown>> = [];

  beforeAll(async () => {
    gateway = await startTestGateway({
      env: { HOST: '0.0.0.0', PUBLIC_BASE_URL: 'https://gateway.example.com/' },
      logLines,
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('makes every link on PUBLIC_BASE_URL, and has nothing to warn about', async () => {
    expectLinksOn(await linksOf(gateway), 'https://gateway.example.com');
    expect(startWarnings(logLines)).toEqual([]);
  });
});

describe('the start warning', () => {
  it('is not given on a loopback HOST', async () => {
    const logLines: Array<Record<string, unknown>> = [];
    const gateway = await startTestGateway({ env: { HOST: '::1' }, logLines });
    try {
      expect(startWarnings(logLines)).toEqual([]);
      expect(sharedDatabaseWarnings(logLines)).toEqual([]);
    } finally {
      await gateway.close();
    }
  });
});

const sharedDatabaseWarnings = (lines: Array<Record<string, unknown>>) =>
  lines.filter((line) => typeof line.msg === 'string' && line.msg.startsWith('media.store is fs with DATABASE_URL'));

describe('the filesystem media store with DATABASE_URL', () => {
  it('is warned of at start: other processes of the database must share its DATA_DIR/media, or their links answer 404', async () => {
    const logLines: Array<Record<string, unknown>> = [];
    // The warning reads the setting; the test gateway runs on a test database of its own either way.
    const gateway = await startTestGateway({ env: { DATABASE_URL: 'postgres://db.internal:5432/gateway' }, logLines });
    try {
      const warnings = sharedDatabaseWarnings(logLines);
      expect(warnings).toHaveLength(1);
      expect(warnings[0]).toMatchObject({ level: 40, mediaStore: 'fs', mediaDir: expect.stringMatching(/\/media$/) });
      expect(String(warnings[0]?.msg)).toContain('media.store: s3');
    } finally {
      await gateway.close();
    }
  });
});
