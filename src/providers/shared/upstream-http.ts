import { Agent, errors, request, type Dispatcher } from 'undici';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { ProviderTarget } from '../provider-adapter.ts';

export type UpstreamBody = Dispatcher.ResponseData['body'];

/** Longest an error body is read for relaying; a provider's error JSON is far smaller. */
const maxErrorBodyBytes = 64 * 1024;

/**
 * The one HTTP client for upstreams: a keep-alive undici agent (one connection pool per origin) shared by
 * every adapter. Non-2xx answers become UpstreamHttpError with the provider's body; network failures and
 * time-outs become UpstreamUnreachableError.
 */
export class UpstreamHttp {
  constructor(private readonly dispatcher: Dispatcher = new Agent({ keepAliveTimeout: 30_000, connections: 256, pipelining: 1 })) {}

  async postJson(
    target: ProviderTarget,
    path: string,
    headers: Record<string, string>,
    body: unknown,
  ): Promise<{ status: number; headers: Dispatcher.ResponseData['headers']; body: UpstreamBody }> {
    let response: Dispatcher.ResponseData;
    try {
      response = await request(`${target.baseUrl}${path}`, {
        dispatcher: this.dispatcher,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', ...target.headers, ...headers },
        body: JSON.stringify(body),
        headersTimeout: target.timeoutMs,
        bodyTimeout: target.timeoutMs,
      });
    } catch (error) {
      throw unreachable(error);
    }
    if (response.statusCode >= 400) {
      const text = await readLimited(response.body).catch(() => '');
      const contentType = response.headers['content-type'];
      throw new UpstreamHttpError(response.statusCode, text, Array.isArray(contentType) ? contentType[0] : contentType);
    }
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /** A POST whose answer is one JSON object, read whole; a body that is anything else is a protocol failure. */
  async postForJson<T extends object>(target: ProviderTarget, path: string, headers: Record<string, string>, body: unknown): Promise<T> {
    const response = await this.postJson(target, path, headers, body);
    let text: string;
    try {
      text = await response.body.text();
    } catch (error) {
      throw unreachable(error);
    }
    let answer: unknown;
    try {
      answer = JSON.parse(text);
    } catch {
      throw new UpstreamUnreachableError('protocol', 'the upstream answered with a body that is not JSON');
    }
    if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) throw new UpstreamUnreachableError('protocol', 'the upstream answered with JSON that is not an object');
    return answer as T;
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

async function readLimited(body: UpstreamBody): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = chunk as Buffer;
    size += buffer.length;
    if (size > maxErrorBodyBytes) {
      body.destroy();
      break;
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function unreachable(error: unknown): UpstreamUnreachableError {
  if (error instanceof UpstreamUnreachableError) return error;
  if (error instanceof errors.HeadersTimeoutError || error instanceof errors.BodyTimeoutError || error instanceof errors.ConnectTimeoutError) {
    return new UpstreamUnreachableError('timeout', 'the upstream provider did not answer in time');
  }
  return new UpstreamUnreachableError('connect', 'the upstream provider could not be reached');
}
