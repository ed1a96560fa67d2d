import type { RequestLog } from './generation-route.ts';

/** Who pays for a generation: the account, and the key when the request came with one. */
export interface Caller {
  accountId: string;
  apiKeyId: string | null;
}

/**
 * One request as the core sees it: who pays, which surface and endpoint it came through (for the usage
 * record, never to choose what runs), and the request's id. A flat object, made once per request.
 */
export interface RequestContext extends Caller {
  /** The surface the request came through (`alpha`, `native`, ...), as the usage record names it. */
  surface: string;
  /** The surface's own name of the endpoint (`chat/completions`, `images/generations`, ...). */
  endpoint: string;
  /** The request's `x-request-id`, kept with the generation's route for operators. */
  requestId?: string;
  /** The request's log line, which waits for the generation's hold to end and carries its usage record. */
  log?: RequestLog;
  /** The request's place under its key's concurrency limit, held by each generation it starts until it ends. */
  slot?: HeldSlot;
}

/**
 * A request's place under a concurrency limit. A generation holds it until its hold ends: a stream whose client
 * left is read on to its end upstream (to be billed), and takes the upstream's capacity until then.
 */
export interface HeldSlot {
  /** Holds the place for one more piece of work; the function returned ends it (more calls change nothing). */
  hold(): () => void;
}
