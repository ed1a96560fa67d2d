import type { FastifyReply, FastifyRequest, preParsingHookHandler } from 'fastify';
import {
  sessionsCounterOf,
  RateLimitedError,
  type KeyRateLimiter,
  type LimitStanding,
  type RateStanding,
} from '../billing/rate-limits.ts';
import { once } from '../domain/once.ts';
import type { HeldSlot } from '../domain/request-context.ts';
import { modelSurfaces, surfaceOf } from '../telemetry/surfaces.ts';

/**
 * Admission under the key's rate limits (a session's: its account's), once the credential is known and before any
 * work (the body is not read yet): a root `preParsing` hook, which runs after every surface's authentication
 * (`onRequest`). A request without a credential, or whose credential has no limits, costs one field check and a
 * note that its settlements are not counted. The
 * slot in flight is given back once the answer's connection has closed, whichever way the request ended (answered,
 * failed, stream ended, client gone, also before admission finished), and every generation it started has ended:
 * a stream the client left is still read from its upstream until it ends (to be billed), a generation under way.
 */
export function admitUnderRateLimits(limiter: KeyRateLimiter): preParsingHookHandler {
  // biome-ignore lint/complexity/useMaxParams: Fastify's preParsing hook signature
  return (request, reply, payload, done) => {
    const principal = request.principal;
    // A session's requests to the model surfaces count together under the account's limits (the operator's,
    // which no credential lifts); the dashboard's own reads and the account API do not.
    if (!principal || (principal.kind === 'session' && !modelSurfaces.has(surfaceOf(request.routeOptions.url ?? '')))) {
      done(null, payload);
      return;
    }
    const counter = principal.kind === 'key' ? principal.apiKeyId : sessionsCounterOf(principal.accountId);
    if (principal.rateLimits === null) {
      limiter.admittedUnlimited(counter);
      done(null, payload);
      return;
    }
    limiter.admit(counter, principal.rateLimits).then(
      (admission) => {
        const slot = new RequestSlot(admission.release);
        request.concurrencySlot = slot;
        // A client gone while admission was under way closed the answer already: 'close' will not come again.
        if (reply.raw.closed || reply.raw.destroyed) slot.closed();
        else reply.raw.once('close', slot.closed);
        sendStanding(request, reply, admission.standing);
        done(null, payload);
      },
      (error: unknown) => {
        if (error instanceof RateLimitedError) {
          sendStanding(request, reply, error.standing);
          reply.header('x-should-retry', 'true');
        }
        done(error instanceof Error ? error : new Error(String(error)));
      },
    );
  };
}

/** A request's concurrency slot: held by its connection and by each generation it starts, given back after the last. */
class RequestSlot implements HeldSlot {
  private holders = 1;
  private connectionOpen = true;

  constructor(private readonly release: () => void) {}

  hold(): () => void {
    this.holders++;
    return once(() => this.end());
  }

  /** The answer's connection closed. */
  readonly closed = (): void => {
    if (!this.connectionOpen) return;
    this.connectionOpen = false;
    this.end();
  };

  private end(): void {
    this.holders--;
    if (this.holders === 0) this.release();
  }
}

/** The surface's own rate-limit headers, as the provider it imitates sends them (alpha: OpenAI, beta: Anthropic). */
function sendStanding(request: FastifyRequest, reply: FastifyReply, standing: RateStanding): void {
  const surface = surfaceOf(request.routeOptions.url ?? '');
  if (surface === 'alpha') {
    alphaHeaders(reply, 'requests', standing.requests);
    alphaHeaders(reply, 'tokens', standing.tokens);
  } else if (surface === 'beta') {
    betaHeaders(reply, 'requests', standing.requests);
    betaHeaders(reply, 'tokens', standing.tokens);
  }
}

function alphaHeaders(reply: FastifyReply, what: 'requests' | 'tokens', standing: LimitStanding | undefined): void {
  if (!standing) return;
  reply.header(`x-ratelimit-limit-${what}`, String(standing.limit));
  reply.header(`x-ratelimit-remaining-${what}`, String(standing.remaining));
  reply.header(`x-ratelimit-reset-${what}`, openAiDuration(standing.resetMs));
}

function betaHeaders(reply: FastifyReply, what: 'requests' | 'tokens', standing: LimitStanding | undefined): void {
  if (!standing) return;
  reply.header(`anthropic-ratelimit-${what}-limit`, String(standing.limit));
  reply.header(`anthropic-ratelimit-${what}-remaining`, String(standing.remaining));
  // Anthropic names the moment the limit is replenished, in RFC 3339.
  reply.header(
    `anthropic-ratelimit-${what}-reset`,
    new Date(Date.now() + standing.resetMs).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  );
}

/** OpenAI's way of writing a wait: `20ms`, `1s`, `6m0s`. */
export function openAiDuration(ms: number): string {
  if (ms < 1000) return `${Math.max(0, Math.ceil(ms))}ms`;
  const seconds = Math.ceil(ms / 1000);
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes}m${seconds % 60}s` : `${seconds}s`;
}
