import type { UsageModality } from './usage-modalities.ts';

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

/**
 * The log line of the request a generation serves. It carries the generation's fields, so that a request that
 * makes a generation writes one line rather than two (a line costs the server more than most of a request's
 * other work).
 */
export interface RequestLog {
  /** The line waits for this reservation to end, settled or released, before it is written. */
  awaits(reservation: { whenEnded(callback: () => void): void }): void;
  /** Takes a usage record's fields into the request's line; false when it cannot (written already, or carrying another). */
  carries(generation: Readonly<Record<string, unknown>>): boolean;
}

/** A generation whose usage record was written: what the operator's log line and metrics are made of. */
export interface RecordedGeneration {
  generationId: string;
  accountId: string;
  apiKeyId: string | null;
  model: string;
  modality: UsageModality;
  status: string;
  /** What the settlement charged within its hold (the ledger charges less when the hold had been swept and less is free). */
  chargedNanos: bigint;
  usage: unknown;
  durationMs: number | null;
  route?: GenerationRoute;
}
