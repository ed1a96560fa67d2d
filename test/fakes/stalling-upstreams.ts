import type { ServerResponse } from 'node:http';
import type { RouterVideoJob } from '../../src/protocols/router-video/videos.ts';
import { sandboxClip } from '../../src/providers/sandbox/sandbox-video.ts';
import { startFakeServer, type FakeServer } from './fake-server.ts';
import { writeJson } from './wire.ts';

export const fakeStallKey = 'fake-stall-key';

/**
 * An upstream that starts what it is asked and never finishes it: OpenAI Images (`POST /v1/images/generations`)
 * sends its headers and the start of its JSON, then nothing more (a hang mid-body); ModelArk Seedance tasks
 * (`POST /api/v3/contents/generations/tasks`) are created, but reading (`GET`) or cancelling (`DELETE`) one is
 * never answered (a hang before the headers). Every request is recorded, headers included.
 */
export async function startStallingUpstream(): Promise<FakeServer> {
  let counter = 0;
  return startFakeServer((request, response) => {
    if (request.method === 'POST' && request.path === '/v1/images/generations') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"created": 1, "data": [{"b64_json": "iVBORw0KGgo');
      return;
    }
    if (request.method === 'POST' && request.path === '/api/v3/contents/generations/tasks')
      return writeJson(response, { status: 200, body: { id: `stalled-task-${++counter}` } });
    if (request.path.startsWith('/api/v3/contents/generations/tasks/')) return;
    writeJson(response, { status: 404, body: { error: { message: `Not found: ${request.method} ${request.path}` } } });
  });
}

/**
 * A routing provider's video API (`POST /api/v1/videos`, then `GET /api/v1/videos/{id}`) whose jobs are
 * completed at their first read and name their video on `storage`, a second origin, as a presigned URL would.
 * Prompt words: `fake-same-origin` names it on the router's own origin instead (`…/content`), and
 * `fake-stall-download` names a storage URL that sends its headers and a few bytes, then nothing more.
 * `storage.requests` records the headers each download came with.
 */
export async function startPresignedVideoFake(): Promise<{ router: FakeServer; storage: FakeServer }> {
  const prompts = new Map<string, string>();
  const clipOf = (id: string) => sandboxClip(prompts.get(id) ?? '', 4, '16:9');
  const sendClip = (response: ServerResponse, id: string) => {
    const bytes = clipOf(id);
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
    response.end(bytes);
  };
  const storage = await startFakeServer((request, response) => {
    const match = /^\/(videos|stall)\/([^/?]+)\.mp4/.exec(request.path);
    if (!match || !prompts.has(match[2]!))
      return writeJson(response, { status: 404, body: { error: 'no such object' } });
    if (match[1] === 'videos') return sendClip(response, match[2]!);
    response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': '1000000' });
    response.write(clipOf(match[2]!).subarray(0, 64));
  });
  let counter = 0;
  const router = await startFakeServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${fakeStallKey}`)
      return writeJson(response, {
        status: 401,
        body: { error: { code: 401, message: 'Missing Authentication header' } },
      });
    if (request.method === 'POST' && request.path === '/api/v1/videos') {
      const id = `video-${++counter}`;
      prompts.set(id, (request.body as { prompt?: string } | undefined)?.prompt ?? '');
      return writeJson<RouterVideoJob>(response, {
        status: 202,
        body: { id, polling_url: `/api/v1/videos/${id}`, status: 'pending' },
      });
    }
    const match = /^\/api\/v1\/videos\/([^/?]+)(\/content)?/.exec(request.path);
    const id = match?.[1];
    if (request.method !== 'GET' || !id || !prompts.has(id))
      return writeJson(response, { status: 404, body: { error: { code: 404, message: 'Not found' } } });
    if (match[2]) return sendClip(response, id);
    const prompt = prompts.get(id)!;
    const url = prompt.includes('fake-same-origin')
      ? `http://${request.headers.host}/api/v1/videos/${id}/content`
      : `${storage.url}/${prompt.includes('fake-stall-download') ? 'stall' : 'videos'}/${id}.mp4?X-Signature=fake`;
    writeJson<RouterVideoJob>(response, {
      status: 200,
      body: { id, status: 'completed', unsigned_urls: [url], usage: { cost: 0.1 } },
    });
  });
  return { router, storage };
}
