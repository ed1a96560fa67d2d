import type { ServerResponse } from 'node:http';
import {
  isRouterVideoRequest,
  type RouterVideoJob,
  type RouterVideoRequest,
} from '../../src/protocols/router-video/videos.ts';
import { sandboxClip } from '../../src/providers/sandbox/sandbox-video.ts';
import { startFakeServer, type FakeServer } from './fake-server.ts';
import { writeJson } from './wire.ts';

export const fakeRouterKey = 'fake-router-key';

/**
 * A fake routing provider speaking its video API (see the OpenRouter wire notes): `POST /api/v1/videos` answers
 * 202 with a `pending` job; each `GET /api/v1/videos/{id}` moves it on (`pending`, then `in_progress`, then
 * `completed` with `unsigned_urls` and `usage.cost`); `GET …/content?index=0` streams the MP4 and, as the real
 * API, needs the key. Errors are `{error: {code, message}}` with the numeric status as `code`. Prompt words:
 * `fake-video-fail` ends `failed` (a string `error`), `fake-error-<status>` fails the creation.
 */
export async function startRouterVideoFake(): Promise<FakeServer> {
  const jobs = new Map<string, { body: RouterVideoRequest; reads: number }>();
  let counter = 0;
  const sendError = (response: ServerResponse, status: number, message: string) =>
    writeJson(response, { status, body: { error: { code: status, message } } });
  return startFakeServer((request, response) => {
    if (request.headers.authorization !== `Bearer ${fakeRouterKey}`)
      return sendError(response, 401, 'Missing Authentication header');
    if (request.method === 'POST' && request.path === '/api/v1/videos') {
      if (!isRouterVideoRequest(request.body)) return sendError(response, 400, 'Invalid video generation request');
      const body = request.body;
      const failure = /fake-error-(\d{3})/.exec(body.prompt ?? '');
      if (failure) return sendError(response, Number(failure[1]), `The fake failed with ${failure[1]}`);
      const id = `job-${++counter}`;
      jobs.set(id, { body, reads: 0 });
      return writeJson<RouterVideoJob>(response, {
        status: 202,
        body: {
          id,
          polling_url: `/api/v1/videos/${id}`,
          status: 'pending',
          generation_id: `gen-${counter}`,
        },
      });
    }
    const match = /^\/api\/v1\/videos\/([^/?]+)(\/content\?index=(\d+))?$/.exec(request.path);
    const job = match ? jobs.get(match[1]!) : undefined;
    if (request.method !== 'GET' || !match || !job) return sendError(response, 404, 'Not found');
    const id = match[1]!;
    const clip = () => sandboxClip(job.body.prompt ?? '', job.body.duration ?? 4, job.body.aspect_ratio ?? '16:9');
    if (match[2]) {
      if (match[3] !== '0' || job.reads < 3) return sendError(response, 404, 'No such content');
      const bytes = clip();
      response.writeHead(200, { 'content-type': 'video/mp4', 'content-length': String(bytes.length) });
      return void response.end(bytes);
    }
    job.reads += 1;
    const answer: RouterVideoJob = {
      id,
      polling_url: `/api/v1/videos/${id}`,
      generation_id: `gen-${id}`,
      status: job.reads === 1 ? 'pending' : job.reads === 2 ? 'in_progress' : 'completed',
    };
    if (answer.status === 'completed' && (job.body.prompt ?? '').includes('fake-video-fail')) {
      answer.status = 'failed';
      answer.error = 'The provider could not make this video';
    } else if (answer.status === 'completed') {
      answer.unsigned_urls = [`http://${request.headers.host}/api/v1/videos/${id}/content?index=0`];
      answer.usage = { cost: 0.4, is_byok: false };
    }
    writeJson<RouterVideoJob>(response, { status: 200, body: answer });
  });
}
