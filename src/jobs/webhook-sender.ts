import { request, type Dispatcher } from 'undici';
import { Webhook } from 'standardwebhooks';
import { addressCheckedAgent, RemoteMediaError, refuseNonPublicLiteral } from '../media/remote-media.ts';
import { bodyBytes, retryAfterMs } from '../providers/shared/upstream-http.ts';

export interface WebhookSenderOptions {
  timeoutMs: number;
  /** `remoteMedia.allowPrivateAddresses`: lets http reach loopback (tests, a local receiver) and lifts the address rules. */
  allowPrivateAddresses: boolean;
}

/** What one POST to an endpoint came to. */
export interface SendResult {
  statusCode: number | null;
  latencyMs: number;
  /** Why it was not delivered, for the delivery log: never a secret, never the request. */
  error: string | null;
  /** The start of the answer's body, at most `excerptBytes`. */
  responseExcerpt: string | null;
  delivered: boolean;
  /** Worth another attempt: a 5xx, a 429, a time-out or a connection that failed. */
  retryable: boolean;
  /** The wait a 429 or 503 asked for (`retry-after`), when it said one. */
  retryAfterMs?: number;
}

/** The start of an answer kept in the delivery log: enough to see what the receiver said, never its whole body. */
const excerptBytes = 512;

/** Ports and hosts a plain-http endpoint may name when private addresses are allowed (a receiver on this machine). */
const loopbackHosts = new Set(['localhost', '127.0.0.1', '[::1]']);

/**
 * The URL an endpoint may have: https, no credentials, not a literal non-public address; plain http only to
 * loopback and only when the configuration allows private addresses. Names are judged again at connect time.
 * Throws a `RemoteMediaError` saying why.
 */
export function checkedWebhookUrl(text: string, options: Pick<WebhookSenderOptions, 'allowPrivateAddresses'>): URL {
  if (!URL.canParse(text)) throw new RemoteMediaError('not a valid URL');
  const url = new URL(text);
  const plainLoopback = url.protocol === 'http:' && options.allowPrivateAddresses && loopbackHosts.has(url.hostname);
  if (url.protocol !== 'https:' && !plainLoopback) throw new RemoteMediaError('webhook URLs must be https');
  if (url.username || url.password) throw new RemoteMediaError('webhook URLs cannot carry credentials');
  refuseNonPublicLiteral(url, options);
  return url;
}

/**
 * Sends webhook events signed in the Standard Webhooks format (`webhook-id`, `webhook-timestamp`,
 * `webhook-signature: v1,<base64 HMAC-SHA256>`) over an agent that reaches only public addresses (the media
 * URL rules, checked when connecting). Redirects are not followed: an endpoint answers where it is.
 */
export class WebhookSender {
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: WebhookSenderOptions) {
    this.dispatcher = addressCheckedAgent(options);
  }

  async send(message: { url: string; secret: string; id: string; body: string; now: Date }): Promise<SendResult> {
    const started = performance.now();
    const elapsed = () => Math.round(performance.now() - started);
    let url: URL;
    try {
      url = checkedWebhookUrl(message.url, this.options);
    } catch (error) {
      return refused(error instanceof Error ? error.message : 'invalid URL', 0);
    }
    const signature = new Webhook(message.secret).sign(message.id, message.now, message.body);
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    try {
      const response = await request(url, {
        dispatcher: this.dispatcher,
        method: 'POST',
        signal,
        headers: {
          'content-type': 'application/json',
          'user-agent': 'model-gateway-webhooks',
          'webhook-id': message.id,
          'webhook-timestamp': String(Math.floor(message.now.getTime() / 1000)),
          'webhook-signature': signature,
        },
        body: message.body,
      });
      const excerpt = await readExcerpt(response.body);
      const statusCode = response.statusCode;
      const delivered = statusCode >= 200 && statusCode < 300;
      const asked = statusCode === 429 || statusCode === 503 ? retryAfterMs(response.headers) : undefined;
      return {
        ...(asked === undefined ? {} : { retryAfterMs: asked }),
        statusCode,
        latencyMs: elapsed(),
        error: delivered ? null : `the endpoint answered HTTP ${statusCode}`,
        responseExcerpt: excerpt,
        delivered,
        retryable: statusCode >= 500 || statusCode === 429,
      };
    } catch (error) {
      const cause = (error as { cause?: unknown }).cause;
      const refusal = error instanceof RemoteMediaError ? error : cause instanceof RemoteMediaError ? cause : undefined;
      if (refusal) return refused(refusal.message, elapsed());
      const timedOut = signal.aborted;
      return {
        statusCode: null,
        latencyMs: elapsed(),
        error: timedOut ? `no answer within ${this.options.timeoutMs} ms` : `${url.host} could not be reached`,
        responseExcerpt: null,
        delivered: false,
        retryable: true,
      };
    }
  }

  async close(): Promise<void> {
    await this.dispatcher.close();
  }
}

/** A URL the address rules refuse: never worth another attempt. */
function refused(reason: string, latencyMs: number): SendResult {
  return {
    statusCode: null,
    latencyMs,
    error: `refused: ${reason}`,
    responseExcerpt: null,
    delivered: false,
    retryable: false,
  };
}

/** The first bytes of the answer as text; the rest is dropped unread. */
async function readExcerpt(body: Dispatcher.ResponseData['body']): Promise<string | null> {
  const chunks: Buffer[] = [];
  let size = 0;
  try {
    for await (const chunk of body) {
      const bytes = bodyBytes(chunk);
      chunks.push(bytes);
      size += bytes.length;
      if (size >= excerptBytes) break;
    }
  } catch {
    // A body cut off after the status: the status is what counts.
  } finally {
    body.on('error', () => undefined);
    body.destroy();
  }
  if (size === 0) return null;
  // PostgreSQL text holds no U+0000: a receiver's NUL must not make its attempt unstorable (and sent again).
  return Buffer.concat(chunks, size).subarray(0, excerptBytes).toString('utf8').replaceAll('\u0000', '\uFFFD');
}
