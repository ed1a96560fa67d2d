/**
 * How a generation reached its upstream, kept on its usage record for operators (the admin API and the log
 * line of each generation): accounts never see it, as provider identity is not part of the contract.
 */
export interface GenerationRoute {
  /** The provider row that served, or the last one tried when none did. */
  providerId: string;
  upstreamModel: string;
  /** Rows tried before it: failed, or skipped because their breaker was open. */
  fallbacks: GenerationAttempt[];
  /** The request's `x-request-id`. */
  requestId?: string;
  /** Milliseconds from the start of the request to the upstream's first byte. */
  firstByteMs?: number;
}

export interface GenerationAttempt {
  providerId: string;
  upstreamModel: string;
  outcome: 'failed' | 'skipped';
  reason: string;
  /** The upstream's status, when it answered one. */
  status?: number;
}

/** A hold as those who wait for it see it: it ends once, with the usage record its settlement wrote, if any. */
export interface EndingHold {
  whenEnded(callback: () => void): void;
  /** The usage record written when the hold was settled; undefined while held, and for a hold given back. */
  readonly recorded: RecordedGeneration | undefined;
}

/**
 * The log line of the request a generation serves. It carries the generation's fields, so that a request that
 * makes a generation writes one line rather than two (a line costs the server more than most of a request's
 * other work).
 */
export interface RequestLog {
  /** The line waits for this hold to end, settled or released, and then carries the record it was settled with. */
  awaits(hold: EndingHold): void;
}

/** A generation whose usage record was written: what the operator's log line and metrics are made of. */
export interface RecordedGeneration {
  generationId: string;
  accountId: string;
  apiKeyId: string | null;
  model: string;
  modality: string;
  status: string;
  /** What the settlement charged within its hold (the ledger charges less when the hold had been swept and less is free). */
  chargedNanos: bigint;
  usage: unknown;
  durationMs: number | null;
  route?: GenerationRoute;
}
