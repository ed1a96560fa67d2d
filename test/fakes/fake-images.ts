import { createHash } from 'node:crypto';
import type { ServerResponse } from 'node:http';
import { encodePng } from '../../src/providers/sandbox/png.ts';
import type { RecordedRequest } from './fake-server.ts';
import { sleep } from './fake-server.ts';

/** A small real PNG, different for each seed. */
export function fakePng(seed: string, width = 16, height = 16): Buffer {
  const hash = createHash('sha256').update(seed).digest();
  return encodePng(width, height, (x, y) => [hash[(x + y) % 32]!, hash[(x * 3) % 32]!, hash[(y * 5) % 32]!, 255]);
}

/**
 * Scenarios a test picks with words in the prompt: `fake-slow-<ms>` answers after that delay, `fake-hang`
 * never answers, `fake-error-<status>` fails with that status, `fake-garbage` answers 200 with a body that is
 * not the protocol's, `fake-partial` makes one image of a group fail, `fake-layer-fail` makes a layer fail,
 * `fake-expired-url` hands out URLs that have already expired, `fake-slow-file-<ms>` serves its files slowly,
 * `fake-retry-after-<value>` sends that `retry-after` with an error (any value, however absurd; `_` for a space),
 * `fake-not-image` answers with files that are no picture (an HTML error page where each image should be).
 */
export interface ImageScenario {
  delayMs: number;
  hang: boolean;
  errorStatus: number | undefined;
  garbage: boolean;
  partial: boolean;
  layerFail: boolean;
  expiredUrls: boolean;
  fileDelayMs: number;
  retryAfter: string | undefined;
  notImage: boolean;
}

/** What a `fake-not-image` answer holds in place of each picture: a provider's error page. */
export const notAnImagePage = Buffer.from('<html><body>503 maintenance</body></html>');

export function scenarioOf(prompt: string): ImageScenario {
  const number = (pattern: RegExp) => Number(pattern.exec(prompt)?.[1] ?? 0);
  const error = /fake-error-(\d{3})/.exec(prompt);
  return {
    delayMs: number(/fake-slow-(\d+)/),
    hang: prompt.includes('fake-hang'),
    errorStatus: error ? Number(error[1]) : undefined,
    garbage: prompt.includes('fake-garbage'),
    partial: prompt.includes('fake-partial'),
    layerFail: prompt.includes('fake-layer-fail'),
    expiredUrls: prompt.includes('fake-expired-url'),
    fileDelayMs: number(/fake-slow-file-(\d+)/),
    retryAfter: /fake-retry-after-(\S+)/.exec(prompt)?.[1]?.replaceAll('_', ' '),
    notImage: prompt.includes('fake-not-image'),
  };
}

/** Waits as the scenario says; false when the fake is to never answer. */
export async function delayFor(scenario: ImageScenario): Promise<boolean> {
  if (scenario.hang) return false;
  if (scenario.delayMs > 0) await sleep(scenario.delayMs);
  return true;
}

/**
 * Files a fake hands out by URL, as a provider's object storage does: each URL carries its expiry, past which
 * (or for an expired scenario) the file answers 403 with an XML error body.
 */
export class FakeFiles {
  private readonly files = new Map<string, { bytes: Buffer; delayMs: number; contentType: string }>();
  private counter = 0;

  constructor(private readonly baseUrl: () => string) {}

  add(bytes: Buffer, options: { expired: boolean; delayMs: number; contentType?: string; extension?: string }): string {
    const name = `${++this.counter}-${createHash('sha1').update(bytes).digest('hex').slice(0, 8)}.${options.extension ?? 'png'}`;
    this.files.set(name, { bytes, delayMs: options.delayMs, contentType: options.contentType ?? 'image/png' });
    const expires = options.expired ? Date.now() - 1000 : Date.now() + 3_600_000;
    return `${this.baseUrl()}/files/${name}?X-Tos-Expires=${expires}&X-Tos-Signature=fake`;
  }

  /** Answers `GET /files/...`; false when the request is not for a file. */
  async serve(request: RecordedRequest, response: ServerResponse): Promise<boolean> {
    const match = /^\/files\/([^?]+)\?X-Tos-Expires=(\d+)/.exec(request.path);
    if (request.method !== 'GET' || !match) return false;
    const file = this.files.get(match[1]!);
    if (!file || Number(match[2]) < Date.now()) {
      response.writeHead(403, { 'content-type': 'application/xml' });
      response.end(
        '<?xml version="1.0" encoding="UTF-8"?><Error><Code>AccessDenied</Code><Message>Request has expired</Message></Error>',
      );
      return true;
    }
    if (file.delayMs > 0) await sleep(file.delayMs);
    response.writeHead(200, { 'content-type': file.contentType, 'content-length': String(file.bytes.length) });
    response.end(file.bytes);
    return true;
  }
}

/** How many generation requests of a fake carried `prompt`: each one an upstream submission. */
export function submissionsOf(requests: readonly RecordedRequest[], path: string, prompt: string): number {
  return requests.filter(
    (request) =>
      request.method === 'POST' &&
      request.path === path &&
      (typeof request.body === 'object'
        ? (request.body as { prompt?: string })?.prompt === prompt
        : String(request.body).includes(prompt)),
  ).length;
}
