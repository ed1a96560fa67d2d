import type { ServerResponse } from 'node:http';
import {
  isSeedanceCreateRequest,
  type SeedanceCreateRequest,
  type SeedanceStatus,
  type SeedanceTask,
} from '../../src/protocols/ark/video-tasks.ts';
import { sandboxClip } from '../../src/providers/sandbox/sandbox-video.ts';
import type { FakeFiles } from './fake-images.ts';
import type { RecordedRequest } from './fake-server.ts';
import { writeJson } from './wire.ts';

/**
 * Seedance tasks as ModelArk runs them (see the ModelArk wire notes): `POST /api/v3/contents/generations/tasks`
 * answers `{id}`; each `GET …/tasks/{id}` moves the task on: `queued` at the first read, `running` at the next
 * (more with `fake-video-slow-<reads>`), then its end, `succeeded` with a real MP4 served by URL, usage in
 * tokens (width x height x 24 fps x seconds / 1024) and the duration and resolution it made. `DELETE` cancels a
 * task not yet read past `queued`. Words in the prompt pick other ends: `fake-video-fail`, `fake-video-cancelled`,
 * `fake-video-expired`, `fake-video-short-<s>` / `fake-video-long-<s>` (a shorter or longer video than asked),
 * `fake-video-claims-<resolution>` (reports a resolution other than asked), `fake-video-garbage` (reads answer
 * JSON that is not a task), `fake-video-lost` (reads answer 404), `fake-video-queued` (never leaves the queue);
 * `fake-error-<status>` fails the creation, `fake-hang` never answers it.
 */
type SendError = (
  response: ServerResponse,
  status: number,
  error: { code: string; message: string; param?: string | null },
) => void;

interface FakeTask {
  body: SeedanceCreateRequest;
  prompt: string;
  reads: number;
  status: SeedanceStatus;
  createdAt: number;
}

const pixels: Record<string, number> = { '480p': 864 * 480, '720p': 1280 * 720, '1080p': 1920 * 1080 };

export class SeedanceTasks {
  private readonly tasks = new Map<string, FakeTask>();
  private counter = 0;

  constructor(
    private readonly files: FakeFiles,
    private readonly sendError: SendError,
  ) {}

  /** Answers the task routes; false for any other request. */
  async handle(request: RecordedRequest, response: ServerResponse): Promise<boolean> {
    const base = '/api/v3/contents/generations/tasks';
    if (request.method === 'POST' && request.path === base) {
      await this.create(request, response);
      return true;
    }
    const match = new RegExp(`^${base}/([^/?]+)$`).exec(request.path);
    if (!match) return false;
    const task = this.tasks.get(decodeURIComponent(match[1]!));
    if (!task) {
      this.sendError(response, 404, {
        code: 'NotFound.TaskId',
        message: `The specified task ${match[1]} is not found.`,
        param: 'id',
      });
      return true;
    }
    if (request.method === 'GET') this.read(decodeURIComponent(match[1]!), task, response);
    else if (request.method === 'DELETE') {
      if (task.status !== 'queued')
        this.sendError(response, 400, {
          code: 'InvalidParameter',
          message: `The task is ${task.status} and cannot be cancelled.`,
          param: 'id',
        });
      else {
        task.status = 'cancelled';
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      }
    } else return false;
    return true;
  }

  private async create(request: RecordedRequest, response: ServerResponse): Promise<void> {
    const body = request.body;
    if (!isSeedanceCreateRequest(body))
      return this.sendError(response, 400, {
        code: 'InvalidParameter',
        message: 'One or more parameters specified in the request are not valid.',
      });
    const prompt = body.content.flatMap((item) => (item.type === 'text' ? [item.text] : [])).join('\n');
    if (prompt.includes('fake-hang')) return;
    const error = /fake-error-(\d{3})/.exec(prompt);
    if (error)
      return this.sendError(response, Number(error[1]), {
        code: Number(error[1]) === 400 ? 'InputTextSensitiveContentDetected' : 'InternalServiceError',
        message: `The fake failed with ${error[1]}`,
      });
    const id = `cgt-${Date.now()}-${++this.counter}`;
    this.tasks.set(id, { body, prompt, reads: 0, status: 'queued', createdAt: Math.floor(Date.now() / 1000) });
    writeJson(response, { status: 200, body: { id }, headers: { 'x-request-id': 'fake-ark-request' } });
  }

  private read(id: string, task: FakeTask, response: ServerResponse): void {
    const prompt = task.prompt;
    if (prompt.includes('fake-video-lost')) {
      this.sendError(response, 404, {
        code: 'NotFound.TaskId',
        message: `The specified task ${id} is not found.`,
        param: 'id',
      });
      return;
    }
    if (prompt.includes('fake-video-garbage'))
      return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"task": "not one"}');
    task.reads += 1;
    const running = 1 + Number(/fake-video-slow-(\d+)/.exec(prompt)?.[1] ?? 0);
    if (task.status === 'queued' || task.status === 'running') {
      if (task.reads === 1 || prompt.includes('fake-video-queued')) task.status = 'queued';
      else if (task.reads <= 1 + running) task.status = 'running';
      else if (prompt.includes('fake-video-fail')) task.status = 'failed';
      else if (prompt.includes('fake-video-cancelled')) task.status = 'cancelled';
      else if (prompt.includes('fake-video-expired')) task.status = 'expired';
      else task.status = 'succeeded';
    }
    const resolution = /fake-video-claims-(480p|720p|1080p)/.exec(prompt)?.[1] ?? task.body.resolution ?? '720p';
    const duration = task.body.duration ?? 5;
    const answer: SeedanceTask = {
      id,
      model: task.body.model,
      status: task.status,
      created_at: task.createdAt,
      updated_at: Math.floor(Date.now() / 1000),
      seed: task.body.seed ?? 58_944,
      resolution,
      ratio: task.body.ratio ?? '16:9',
      duration,
      framespersecond: 24,
      error: null,
    };
    if (task.status === 'succeeded') {
      const delivered = Number(/fake-video-(?:short|long)-(\d+)/.exec(prompt)?.[1] ?? duration);
      const video = sandboxClip(prompt, delivered, task.body.ratio ?? '16:9');
      answer.content = {
        video_url: this.files.add(video, { expired: false, delayMs: 0, contentType: 'video/mp4', extension: 'mp4' }),
      };
      const tokens = Math.round(((pixels[resolution] ?? pixels['720p']!) * 24 * duration) / 1024);
      answer.usage = { completion_tokens: tokens, total_tokens: tokens };
    }
    if (task.status === 'failed')
      answer.error = {
        code: 'OutputVideoSensitiveContentDetected',
        message: 'The generated video may contain sensitive information.',
      };
    writeJson<SeedanceTask>(response, { status: 200, body: answer, headers: { 'x-request-id': 'fake-ark-request' } });
  }
}
