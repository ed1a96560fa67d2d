import type { IncomingHttpHeaders } from 'node:http';
import { maxRetryAfterMs, retryAfterMs } from './upstream-http.ts';

/** How long a key that reported nothing left, without saying when it resets, is passed over. */
const unknownResetMs = 1_000;

/** What the gateway last read of a key's rate limits, as the operator sees it. */
export interface HeadroomView {
  remainingRequests?: number;
  remainingTokens?: number;
  /** When the numbers were read (ISO 8601). */
  observedAt?: string;
  /** Until when requests pass this key over (ISO 8601), while it has nothing left. */
  exhaustedUntil?: string;
}

/**
 * One upstream key's rate-limit headroom, read from the headers of every answer the upstream gives with it:
 * OpenAI's `x-ratelimit-remaining-requests` / `-tokens` with `x-ratelimit-reset-requests` / `-tokens`
 * (durations such as `6m0s`), Anthropic's `anthropic-ratelimit-requests-remaining` / `-tokens-remaining` with
 * their `-reset` (RFC 3339), and the generic `x-ratelimit-remaining` / `x-ratelimit-reset` (epoch) of
 * OpenRouter's 429s; a 429 passes the key over for its `retry-after`. A key with no request or token left is
 * exhausted until its reset, and requests choose among the other keys meanwhile.
 */
export class RateLimitHeadroom {
  remainingRequests: number | undefined;
  remainingTokens: number | undefined;
  observedAt = 0;
  exhaustedUntil = 0;

  /** Reads an answer's headers; a few property lookups when the upstream sends no rate-limit headers. */
  observe(headers: IncomingHttpHeaders, status: number, now = Date.now()): void {
    const requests =
      headers['x-ratelimit-remaining-requests'] ??
      headers['anthropic-ratelimit-requests-remaining'] ??
      headers['x-ratelimit-remaining'];
    const tokens = headers['x-ratelimit-remaining-tokens'] ?? headers['anthropic-ratelimit-tokens-remaining'];
    if (requests === undefined && tokens === undefined && status !== 429) return;
    this.observedAt = now;
    if (requests !== undefined) this.remainingRequests = count(requests);
    if (tokens !== undefined) this.remainingTokens = count(tokens);
    if (status === 429) {
      this.exhaustedUntil = now + (retryAfterMs(headers, now) ?? resetAt(headers, now) ?? unknownResetMs);
    } else if (this.remainingRequests === 0 || this.remainingTokens === 0) {
      this.exhaustedUntil = now + (resetAt(headers, now) ?? unknownResetMs);
    } else {
      this.exhaustedUntil = 0;
    }
  }

  /** Whether requests should pass the key over now. */
  exhausted(now: number): boolean {
    return now < this.exhaustedUntil;
  }

  view(now = Date.now()): HeadroomView {
    return {
      ...(this.remainingRequests === undefined ? {} : { remainingRequests: this.remainingRequests }),
      ...(this.remainingTokens === undefined ? {} : { remainingTokens: this.remainingTokens }),
      ...(this.observedAt === 0 ? {} : { observedAt: new Date(this.observedAt).toISOString() }),
      ...(this.exhausted(now) ? { exhaustedUntil: new Date(this.exhaustedUntil).toISOString() } : {}),
    };
  }
}

function single(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** A header's count; anything that is not a whole number reads as unknown. */
function count(value: string | string[]): number | undefined {
  const text = single(value)?.trim();
  return text && /^\d+$/.test(text) ? Number(text) : undefined;
}

/** Milliseconds until the limit that ran out resets, by whichever header the upstream sent; undefined when none says. */
function resetAt(headers: IncomingHttpHeaders, now: number): number | undefined {
  const waits = [
    duration(single(headers['x-ratelimit-reset-requests'])),
    duration(single(headers['x-ratelimit-reset-tokens'])),
    moment(single(headers['anthropic-ratelimit-requests-reset']), now),
    moment(single(headers['anthropic-ratelimit-tokens-reset']), now),
    epoch(single(headers['x-ratelimit-reset']), now),
  ].filter((wait) => wait !== undefined);
  return waits.length === 0 ? undefined : Math.min(maxRetryAfterMs, Math.max(...waits));
}

/** OpenAI's durations: `1s`, `6m0s`, `120ms`, `1h2m3.5s`. */
function duration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const parts = [...text.trim().matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)];
  if (parts.length === 0) return undefined;
  const unit: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  return Math.ceil(parts.reduce((sum, [, amount, name]) => sum + Number(amount) * unit[name!]!, 0));
}

/** Anthropic's RFC 3339 moment. */
function moment(text: string | undefined, now: number): number | undefined {
  const at = text ? Date.parse(text) : Number.NaN;
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}

/** A Unix time in seconds or milliseconds. */
function epoch(text: string | undefined, now: number): number | undefined {
  if (!text || !/^\d+$/.test(text.trim())) return undefined;
  const value = Number(text.trim());
  return Math.max(0, (value < 1e12 ? value * 1000 : value) - now);
}
