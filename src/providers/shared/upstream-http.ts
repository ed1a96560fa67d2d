import type { Readable } from 'node:stream';
import { Agent, errors, type Dispatcher, type FormData } from 'undici';
import { GatewayError } from '../../domain/errors.ts';
import { revealed, Secret } from '../../domain/secret.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import type { ProviderTarget } from '../provider-adapter.ts';
import { CredentialScrubber, credentialForms } from '../../domain/credential-scrubber.ts';
import { ScrubbingAgent } from './scrubbing-agent.ts';

/** An upstream answer's body: bytes as they arrive; destroying it closes the upstream exchange. */
export type UpstreamBody = Readable;

/** A piece of an upstream body: undici yields bytes; anything else is a transport fault, not an answer. */
export function bodyBytes(chunk: unknown): Buffer {
  if (Buffer.isBuffer(chunk)) return chunk;
  if (chunk instanceof Uint8Array) return Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
  throw new UpstreamUnreachableError('protocol', 'the upstream body yielded something other than bytes');
}

export interface UpstreamResponse {
  status: number;
  headers: Dispatcher.ResponseData['headers'];
  body: UpstreamBody;
}

/** Request headers of an adapter: credentials stay `Secret`s until the exchange writes them. */
export type UpstreamHeaders = Readonly<Record<string, string | Secret>>;

/** One exchange with a provider: the path under its base URL, the headers, and what may end it early. */
export interface UpstreamCall {
  path: string;
  headers: UpstreamHeaders;
  signal?: AbortSignal | undefined;
}

/** Longest an error body is read for relaying; a provider's error JSON is far smaller. */
const maxErrorBodyBytes = 64 * 1024;
/** Longest JSON answer read whole (a batch of 128 large embeddings is under 10 MiB). */
const maxJsonAnswerBytes = 128 * 1024 * 1024;

/** A path of a call the URL parser leaves as it is: characters it never encodes (a query's `?` and `=` among them). */
const plainPath = /^\/[A-Za-z0-9\-._~!$&()*+,;=:@/%?]*$/;
/** A dot segment, which the parser resolves, written plainly or percent-encoded. */
const dotSegment = /\/(\.|%2e)/i;

/**
 * The one HTTP client for upstreams: keep-alive undici agents (one connection pool per origin) shared by
 * every adapter. Non-2xx answers become UpstreamHttpError with the provider's body; network failures,
 * time-outs and broken framing become UpstreamUnreachableError.
 *
 * Three clocks bound an exchange: connecting, the wait for the headers and for each next body chunk
 * (`firstByteTimeoutMs`), and the whole exchange (`timeoutMs`), after which the upstream is cut even when
 * it keeps sending, so a generation that never ends cannot hold its reservation or its socket forever.
 * The size of a stream's events is bounded where streams are cut into events (`stream-splitters.ts`).
 */
export class UpstreamHttp {
  /** Agents by connect time-out, which undici sets per agent rather than per request. */
  private readonly agents = new Map<number, ScrubbingAgent>();
  /** Base URLs parsed: the origin, and the path (undefined for one with a query or fragment, parsed per call). */
  private readonly bases = new Map<string, { origin: string; pathPrefix: string | undefined }>();

  /** `maxConnectionsPerOrigin` bounds concurrent exchanges (streams included) with one provider origin. */
  constructor(private readonly maxConnectionsPerOrigin = 4096) {}

  private agentFor(connectTimeoutMs: number): ScrubbingAgent {
    let agent = this.agents.get(connectTimeoutMs);
    if (!agent) {
      agent = new ScrubbingAgent(
        new Agent({
          keepAliveTimeout: 30_000,
          connections: this.maxConnectionsPerOrigin,
          pipelining: 1,
          connect: { timeout: connectTimeoutMs },
        }),
      );
      this.agents.set(connectTimeoutMs, agent);
    }
    return agent;
  }

  /**
   * Where a call goes: the origin and path `${baseUrl}${path}` names once parsed as a URL (percent-encoded,
   * dot segments resolved, a fragment dropped). A base URL is parsed once, not on every call (undici's
   * `request` parses the whole URL each time); a call whose URL the parser would change in any way other than
   * joining the two (a base URL with a query or fragment, a path with characters it encodes or a dot segment)
   * is parsed whole, as before.
   */
  private addressOf(baseUrl: string, path: string): { origin: string; path: string } {
    let base = this.bases.get(baseUrl);
    if (!base) {
      const url = new URL(baseUrl);
      const plain = url.search === '' && url.hash === '' && !baseUrl.endsWith('#') && !baseUrl.endsWith('?');
      base = { origin: url.origin, pathPrefix: plain ? url.pathname.replace(/\/$/, '') : undefined };
      this.bases.set(baseUrl, base);
    }
    if (base.pathPrefix !== undefined && plainPath.test(path) && !dotSegment.test(path))
      return { origin: base.origin, path: `${base.pathPrefix}${path}` };
    const url = new URL(`${baseUrl}${path}`);
    return { origin: url.origin, path: `${url.pathname}${url.search}` };
  }

  async postJson(target: ProviderTarget, call: UpstreamCall & { body: unknown }): Promise<UpstreamResponse> {
    return this.exchange(target, {
      ...call,
      method: 'POST',
      headers: { 'content-type': 'application/json', ...call.headers },
      payload: serialised(call.body),
    });
  }

  /** A multipart/form-data POST (file uploads); undici writes the boundary and the content type. */
  async postForm(target: ProviderTarget, call: UpstreamCall & { form: FormData }): Promise<UpstreamResponse> {
    return this.exchange(target, { ...call, method: 'POST', payload: call.form });
  }

  /** A GET whose answer is one JSON object (a task polled, say). */
  async getForJson(target: ProviderTarget, call: UpstreamCall): Promise<object> {
    return jsonObjectOf(await this.exchange(target, { ...call, method: 'GET', payload: undefined }));
  }

  /** A DELETE whose answer body, if any, is not needed. */
  async delete(target: ProviderTarget, call: UpstreamCall): Promise<void> {
    const response = await this.exchange(target, { ...call, method: 'DELETE', payload: undefined });
    await readText(response.body, { limit: maxErrorBodyBytes, truncate: true }).catch(() => '');
  }

  /** `signal` (a media job's deadline, say) aborts the exchange beside its own clocks, the body's reading included. */
  private async exchange(
    target: ProviderTarget,
    call: UpstreamCall & { method: 'GET' | 'POST' | 'DELETE'; payload: string | FormData | undefined },
  ): Promise<UpstreamResponse> {
    const { method, path, headers, payload, signal } = call;
    const deadline = exchangeDeadline(target.timeoutMs, signal);
    let response: Dispatcher.ResponseData<CredentialScrubber | undefined>;
    try {
      const address = this.addressOf(target.baseUrl, path);
      const sent = { ...target.headers, ...headers };
      response = await this.agentFor(target.connectTimeoutMs).request({
        origin: address.origin,
        path: address.path,
        method,
        // The one place provider credentials are revealed: as the request's headers are written.
        headers: sentHeaders({ accept: 'application/json, text/event-stream', ...sent }),
        // The answer's bytes pass through it before they reach the body (ScrubbingAgent).
        opaque: scrubberFor(sent),
        body: payload,
        headersTimeout: target.firstByteTimeoutMs,
        bodyTimeout: target.firstByteTimeoutMs,
        signal: deadline.signal,
      });
    } catch (error) {
      deadline.clear();
      throw unreachable(error);
    }
    // The exchange ends with its body: read to its end, destroyed by its reader, or cut by a clock.
    if (response.body.destroyed) deadline.clear();
    else response.body.once('close', deadline.clear);
    target.headroom?.observe(response.headers, response.statusCode);
    if (response.statusCode >= 400) {
      const text = await readText(response.body, { limit: maxErrorBodyBytes, truncate: true }).catch(() => '');
      throw new UpstreamHttpError(response.statusCode, text, {
        contentType: relayedErrorContentType(response.headers['content-type']),
        retryAfterMs: retryAfterMs(response.headers),
      });
    }
    return { status: response.statusCode, headers: response.headers, body: response.body };
  }

  /** A POST whose answer is one JSON object, read whole; a body that is anything else is a protocol failure. */
  async postForJson(target: ProviderTarget, call: UpstreamCall & { body: unknown }): Promise<object> {
    return jsonObjectOf(await this.postJson(target, call));
  }

  async postFormForJson(target: ProviderTarget, call: UpstreamCall & { form: FormData }): Promise<object> {
    return jsonObjectOf(await this.postForm(target, call));
  }

  async close(): Promise<void> {
    await Promise.all([...this.agents.values()].map((agent) => agent.close()));
  }

  /** Ends every exchange under way now (a stop past its grace): their readers see the upstream cut. */
  async cut(): Promise<void> {
    const stopping = new UpstreamUnreachableError('connect', 'the gateway is stopping');
    const agents = [...this.agents.values()];
    // Destroyed, they are done with: `close` has none of them left to close.
    this.agents.clear();
    await Promise.all(agents.map((agent) => agent.destroy(stopping)));
  }
}

/** The request as JSON text; what cannot be written (nested past the engine's stack, say) is the client's 400, and nothing is sent. */
function serialised(body: unknown): string {
  try {
    return JSON.stringify(body);
  } catch (error) {
    throw new GatewayError(
      'GW_VALIDATION',
      `the request cannot be forwarded: ${error instanceof Error ? error.message : 'it cannot be written as JSON'}`,
    );
  }
}

/**
 * The whole exchange's clock and the caller's signal as one signal, aborted with a `TimeoutError` when the
 * clock runs out or with the caller's reason. One timer, cleared when the exchange ends: `AbortSignal.timeout`
 * and `AbortSignal.any` cost about ten times as much per call (a timer that is never cleared, and weak
 * references the collector must trace), on every upstream call.
 */
function exchangeDeadline(timeoutMs: number, signal: AbortSignal | undefined): { signal: AbortSignal; clear(): void } {
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new DOMException('The operation was aborted due to timeout', 'TimeoutError')),
    timeoutMs,
  );
  // Like AbortSignal.timeout's, the clock alone never keeps the process running.
  timer.unref();
  const forward = () => controller.abort(signal?.reason);
  if (signal?.aborted) forward();
  else signal?.addEventListener('abort', forward, { once: true });
  return {
    signal: controller.signal,
    clear: () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', forward);
    },
  };
}

function sentHeaders(headers: UpstreamHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, revealed(value)]));
}

/**
 * What cuts the request's credentials out of its answer as it arrives (credential-scrubber.ts): a provider may
 * quote the key it refused in an error, or anything in an answer it calls a success. None for a request without.
 */
function scrubberFor(headers: UpstreamHeaders): CredentialScrubber | undefined {
  const forms = credentialForms(Object.values(headers).filter((value) => value instanceof Secret));
  return forms.length === 0 ? undefined : new CredentialScrubber(forms);
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

const mediaTypePattern = /^\s*([\w!#$%&'*+.^`|~-]{1,127}\/[\w!#$%&'*+.^`|~-]{1,127})\s*(?:;|$)/;
/** What providers answer in: JSON (and JSON's suffixed types), JSON lines, event streams and plain text. */
const relayedMediaTypes = /^(?:application\/(?:[\w.-]+\+)?json|application\/x-ndjson|text\/event-stream|text\/plain)$/;
const utf8Pattern = /;\s*charset\s*=\s*"?utf-8"?\s*(?:;|$)/i;

/**
 * An upstream answer's content type as the gateway relays it: a media type providers answer in, and its charset
 * when that is UTF-8; nothing else (undefined for any other). Any other parameter is the upstream's free text
 * (one could echo the request's authorization header back), and a relayed header is as much part of the answer
 * as its body.
 */
export function relayedContentType(value: string | string[] | undefined): string | undefined {
  const header = single(value);
  if (header === undefined) return undefined;
  const mediaType = mediaTypePattern.exec(header)?.[1]?.toLowerCase();
  if (mediaType === undefined || !relayedMediaTypes.test(mediaType)) return undefined;
  return utf8Pattern.test(header) ? `${mediaType}; charset=utf-8` : mediaType;
}

/**
 * An upstream error's content type as relayed: any other than those `relayedContentType` keeps (an HTML error
 * page) goes as plain text, so that no page an upstream writes runs from the gateway's origin.
 */
function relayedErrorContentType(value: string | string[] | undefined): string | undefined {
  return relayedContentType(value) ?? (single(value) === undefined ? undefined : 'text/plain; charset=utf-8');
}

/** Longest wait an upstream's retry-after is taken for: a day (what is asked beyond it is read as a day). */
export const maxRetryAfterMs = 86_400_000;

/**
 * The wait a provider asked for: `retry-after-ms` (OpenAI), else `retry-after` in seconds or as an HTTP date;
 * undefined when neither says a wait, and at most `maxRetryAfterMs`, whatever the upstream wrote.
 */
export function retryAfterMs(headers: Dispatcher.ResponseData['headers'], now = Date.now()): number | undefined {
  const milliseconds = single(headers['retry-after-ms'])?.trim();
  if (milliseconds && /^\d+(\.\d+)?$/.test(milliseconds))
    return Math.min(maxRetryAfterMs, Math.ceil(Number(milliseconds)));
  const value = single(headers['retry-after'])?.trim();
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Math.min(maxRetryAfterMs, Math.ceil(Number(value) * 1000));
  // An HTTP date begins with the day's name (all three of its formats); Date.parse alone would read "-5" as a year.
  const date = /^[A-Za-z]{3}/.test(value) ? Date.parse(value) : Number.NaN;
  return Number.isNaN(date) ? undefined : Math.min(maxRetryAfterMs, Math.max(0, date - now));
}

/** Reads a body as text up to `limit` bytes: past it, the rest is cut off (`truncate`) or the answer refused. */
async function readText(
  body: UpstreamBody,
  { limit, truncate }: { limit: number; truncate: boolean },
): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    const buffer = bodyBytes(chunk);
    size += buffer.length;
    if (size > limit) {
      body.destroy();
      if (truncate) break;
      throw new UpstreamUnreachableError('protocol', `the upstream answer is larger than ${limit} bytes`);
    }
    chunks.push(buffer);
  }
  return Buffer.concat(chunks).toString('utf8');
}

export function unreachable(error: unknown): UpstreamUnreachableError {
  if (error instanceof UpstreamUnreachableError) return error;
  if (
    error instanceof errors.HeadersTimeoutError ||
    error instanceof errors.BodyTimeoutError ||
    error instanceof errors.ConnectTimeoutError
  ) {
    return new UpstreamUnreachableError('timeout', 'the upstream provider did not answer in time');
  }
  if (error instanceof Error && error.name === 'TimeoutError') {
    return new UpstreamUnreachableError(
      'timeout',
      'the upstream provider did not finish within the maximum generation time',
    );
  }
  return new UpstreamUnreachableError('connect', 'the upstream provider could not be reached');
}

/** A POST whose answer is one JSON object, read whole; a body that is anything else is a protocol failure. */
async function jsonObjectOf(response: UpstreamResponse): Promise<object> {
  let text: string;
  try {
    text = await readText(response.body, { limit: maxJsonAnswerBytes, truncate: false });
  } catch (error) {
    throw unreachable(error);
  }
  let answer: unknown;
  try {
    answer = JSON.parse(text);
  } catch {
    throw new UpstreamUnreachableError('protocol', 'the upstream answered with a body that is not JSON');
  }
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer))
    throw new UpstreamUnreachableError('protocol', 'the upstream answered with JSON that is not an object');
  return answer;
}
