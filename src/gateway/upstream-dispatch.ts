import { setTimeout as sleep } from 'node:timers/promises';
import { SpanStatusCode, trace } from '@opentelemetry/api';
import { GatewayError } from '../domain/errors.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../domain/upstream-failure.ts';
import type { GenerationAttempt } from '../domain/generation-route.ts';
import type { DispatchEvents, RowRef } from '../domain/provider-rows.ts';
import { worthFallingBack } from './fallback.ts';
import { RowUnavailable, type ProviderBreakers } from './provider-breakers.ts';
import type { RowHealth } from './row-health.ts';
import type { RowLatencies } from './row-routing.ts';
import type { UpstreamKey, UpstreamKeys } from './upstream-keys.ts';

/** The process's breakers and the operator's settings of fallbacks and retries, shared by every dispatch. */
export interface Resilience {
  breakers: ProviderBreakers;
  events: DispatchEvents;
  /** Longest a request waits in all for the `retry-after` of a provider with no other row left to try; 0 never waits. */
  retryBudgetMs: number;
  /** Tries again of that last row at most. */
  maxRetries: number;
  /** Whether each upstream attempt gets a span (tracing is configured); otherwise not even a no-op span is made. */
  traced: boolean;
  /** Each row's latest attempts, for the operator console's health figures (absent: not kept). */
  health?: RowHealth;
  /** The providers' upstream keys: each attempt is sent with one (absent: the provider's single key, as configured). */
  keys?: UpstreamKeys;
  /** Where each attempt's time to first byte is kept, for `routing: latency`. */
  latencies?: RowLatencies;
}

export interface DispatchOptions<R extends RowRef, T> {
  modelId: string;
  /** The account the request is made for: a row's breaker opens only on failures seen across several accounts. */
  accountId: string;
  /** The candidate rows, best first. */
  rows: readonly R[];
  resilience: Resilience;
  /** Whether a failure may go on to another row (nothing reached the client, the failure is one another row may not share). */
  mayContinue: (error: unknown) => boolean;
  /** One attempt on `row`, sent with `key` (undefined: the row's provider settings as they are). */
  attempt: (row: R, key: UpstreamKey | undefined) => Promise<T>;
  /** Filled as rows are tried: the rows that failed or were skipped before the one that served (or the last failure). */
  attempts: GenerationAttempt[];
}

/**
 * Runs a request over a model's provider rows, best first: a row whose breaker is open is skipped without
 * waiting on it, a failure another row may not share falls back to the next row, and the last row left may
 * be tried again after the `retry-after` its provider asked for, while that fits the budget (in time and in
 * tries). A breaker skips its row only when another row may still serve the request: a later row whose
 * breaker would let the call through, or an earlier row's failure to relay. Otherwise the row is called
 * regardless, so the client gets the upstream's own answer, never a 503 of the gateway's that could not be a
 * better one (a model with a single row is always sent to). When all rows fail, the last failure is relayed.
 * Each attempt is sent with one of its provider's upstream keys, chosen for it (`UpstreamKeys.choose`), through
 * the breaker of that row and key; the key's id is kept with the attempt.
 */
export async function dispatchWithFallback<R extends RowRef, T>(
  options: DispatchOptions<R, T>,
): Promise<{ value: T; row: R; key: UpstreamKey | undefined }> {
  const { rows, attempts } = options;
  const { breakers, events, traced, keys, latencies, health } = options.resilience;
  let budgetMs = options.resilience.retryBudgetMs;
  let retries = options.resilience.maxRetries;
  let soonestRetryMs = Number.POSITIVE_INFINITY;
  // The latest failure of a row (fallen back from): what the client gets if every row after it is skipped.
  let failed: { error: unknown } | undefined;
  for (let index = 0; index < rows.length; index += 1) {
    const row = rows[index]!;
    const next = rows[index + 1];
    const maySkip =
      failed !== undefined ||
      rows.some((other, at) => at > index && (keys ? keys.available(other, breakers) : breakers.available(other)));
    const key = keys?.choose(row, breakers);
    const healthFrom = health ? performance.now() : 0;
    try {
      const startedAt = latencies ? Date.now() : 0;
      const attempt = () =>
        breakers.run({ row, keyId: key?.id, accountId: options.accountId, maySkip }, () => options.attempt(row, key));
      const value = await (traced ? inSpan(options.modelId, row, attempt) : attempt());
      latencies?.record(row, Date.now() - startedAt);
      health?.record(row, performance.now() - healthFrom, false);
      return { value, row, key };
    } catch (error) {
      // Only what the upstream did counts: an answer (a 4xx too) or a failure another row may not share.
      if (health && (error instanceof UpstreamHttpError || worthFallingBack(error)))
        health.record(row, performance.now() - healthFrom, worthFallingBack(error));
      if (error instanceof RowUnavailable) {
        soonestRetryMs = Math.min(soonestRetryMs, error.retryInMs);
        attempts.push({
          providerId: row.providerId,
          upstreamModel: row.upstreamModel,
          outcome: 'skipped',
          reason: 'breaker open',
          ...recordedKey(key),
        });
        if (next) events.fallback({ modelId: options.modelId, from: row, to: next, reason: 'breaker open' });
        continue;
      }
      const reason = describe(error);
      attempts.push({
        providerId: row.providerId,
        upstreamModel: row.upstreamModel,
        outcome: 'failed',
        reason,
        ...statusOf(error),
        ...recordedKey(key),
      });
      if (!options.mayContinue(error)) throw error;
      if (next) {
        failed = { error };
        events.fallback({ modelId: options.modelId, from: row, to: next, reason });
        continue;
      }
      const waitMs = error instanceof UpstreamHttpError ? error.retryAfterMs : undefined;
      if (waitMs !== undefined && waitMs <= budgetMs && retries > 0) {
        budgetMs -= waitMs;
        retries -= 1;
        events.retry({ modelId: options.modelId, row, afterMs: waitMs, reason });
        await sleep(waitMs);
        index -= 1;
        continue;
      }
      throw error;
    }
  }
  if (failed) throw failed.error;
  // Only without a single row to try: a row is skipped only while another may serve the request.
  const seconds = Math.max(1, Math.ceil(soonestRetryMs / 1000));
  throw new GatewayError(
    'GW_UPSTREAM_UNAVAILABLE',
    `model "${options.modelId}" is temporarily unavailable: its providers failed repeatedly; try again in ${seconds} s`,
  ).retryAfter(seconds);
}

/**
 * A span of one upstream attempt, up to its first byte. The tracer is the one of the provider registered now:
 * a tracer held from before would keep the provider of a gateway already closed in this process.
 */
function inSpan<T>(modelId: string, row: RowRef, attempt: () => Promise<T>): Promise<T> {
  return trace.getTracer('model-gateway').startActiveSpan(
    `upstream ${row.providerId}`,
    {
      attributes: {
        'gateway.model': modelId,
        'gateway.provider': row.providerId,
        'gateway.upstream_model': row.upstreamModel,
      },
    },
    async (span) => {
      try {
        return await attempt();
      } catch (error) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: describe(error) });
        throw error;
      } finally {
        span.end();
      }
    },
  );
}

function describe(error: unknown): string {
  if (error instanceof UpstreamHttpError) return `upstream answered ${error.status}`;
  if (error instanceof UpstreamUnreachableError)
    return `upstream ${error.reason === 'protocol' ? 'broke its protocol' : error.reason === 'timeout' ? 'timed out' : 'unreachable'}`;
  if (error instanceof GatewayError) return error.code;
  return 'failed';
}

/** The key's id as an attempt keeps it, when the provider has named keys. */
function recordedKey(key: UpstreamKey | undefined): { keyId?: string } {
  return key?.recorded ? { keyId: key.id } : {};
}

function statusOf(error: unknown): { status?: number } {
  return error instanceof UpstreamHttpError ? { status: error.status } : {};
}
