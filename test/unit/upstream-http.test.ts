import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import type { ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { startFakeServer, type FakeServer } from '../fakes/fake-server.ts';

/** An upstream whose path picks what it streams. */
const answers: Record<string, string> = {
  '/short-lines': 'data: {"a":1}\n\ndata: {"b":2}\n\n',
  '/long-line-inside-a-chunk': `data: {"pad":"${'x'.repeat(3_000)}"}\n\ndata: {"b":2}\n\n`,
  '/long-line-across-chunks': `data: {"pad":"${'y'.repeat(3_000)}`,
};

describe('the upstream HTTP client', () => {
  let fake: FakeServer;
  const http = new UpstreamHttp();
  let target: ProviderTarget;

  beforeAll(async () => {
    fake = await startFakeServer((request, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      const answer = answers[request.path] ?? '';
      // One write for the whole answer, or 500 characters at a time for the last case: both ways a line can arrive.
      if (request.path !== '/long-line-across-chunks') return void response.end(answer);
      for (let start = 0; start < answer.length; start += 500) response.write(answer.slice(start, start + 500));
      response.end();
    });
    target = { baseUrl: fake.url, apiKey: 'k', timeoutMs: 5_000, firstByteTimeoutMs: 5_000, connectTimeoutMs: 5_000, maxSseLineBytes: 1024, headers: {} };
  });
  afterAll(async () => {
    await http.close();
    await fake.close();
  });

  async function read(path: string): Promise<string> {
    const response = await http.postJson(target, path, {}, { stream: true });
    let text = '';
    for await (const chunk of response.body) text += (chunk as Buffer).toString();
    return text;
  }

  it('passes a stream of short lines through as it came', async () => {
    expect(await read('/short-lines')).toBe(answers['/short-lines']);
  });

  it('refuses a line over the limit, whether it ends inside one chunk or spans several', async () => {
    for (const path of ['/long-line-inside-a-chunk', '/long-line-across-chunks']) {
      const failure = await read(path).catch((error: unknown) => error);
      expect(failure, path).toBeInstanceOf(UpstreamUnreachableError);
      expect((failure as Error).message).toMatch(/longer than 1024 bytes/);
    }
  });
});
