import Type, { type Static } from 'typebox';
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
  /** The model's routing strategy, when its configuration names one: how the rows were ordered for this request. */
  strategy?: RoutingStrategyName;
  /** The id of the provider's upstream key the serving row was sent with (never the key), when the provider has named keys. */
  keyId?: string;
}

/** The routing strategies a model may name (config `routing`). */
export const routingStrategyNames = ['priority', 'weighted', 'latency', 'price'] as const;
export type RoutingStrategyName = (typeof routingStrategyNames)[number];

/** A row tried before the one that served: as the usage record keeps it, and as a media job stores it meanwhile. */
export const GenerationAttemptSchema = Type.Object({
  providerId: Type.String(),
  upstreamModel: Type.String(),
  outcome: Type.Union([Type.Literal('failed'), Type.Literal('skipped')]),
  reason: Type.String(),
  /** The upstream's status, when it answered one. */
  status: Type.Optional(Type.Integer()),
  /** The id of the upstream key the row was tried with (never the key), when the provider has named keys. */
  keyId: Type.Optional(Type.String()),
});
export type GenerationAttempt = Static<typeof GenerationAttemptSchema>;

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

/**
 * A generation's usage record, the one shape of it: what storage writes, and what the operator's log line and
 * metrics are made of once it is written. Built by `usageRecord` (billing/settlement.ts) for requests and
 * media jobs alike.
 */
export interface RecordedGeneration {
  generationId: string;
  accountId: string;
  apiKeyId: string | null;
  model: string;
  modality: UsageModality;
  status: string;
  /** The request as recorded (inline media shortened). */
  request: unknown;
  /** The usage as reported or counted; as written once settled (it then says what was not charged, if anything). */
  usage: unknown;
  durationMs: number | null;
  route?: GenerationRoute;
  /** The catalog's price version the cost was reckoned at (a media job's: the one frozen at submission). */
  priceVersion?: string;
  /** What the ledger charged (before the settlement is written: what it was asked to charge). */
  chargedNanos: bigint;
}

/** Longest duration a record keeps, in milliseconds (its column is a 32-bit integer). */
const maxRecordedMs = 2_147_483_647;

/**
 * The usage record of a generation about to be settled, timed from `startedAt` to `endedAt` (epoch
 * milliseconds); it says `claimNanos` charged until the ledger answers what it charged.
 */
export function usageRecord(
  fields: Omit<RecordedGeneration, 'durationMs' | 'chargedNanos'> & {
    startedAt: number;
    endedAt: number;
    claimNanos: bigint;
  },
): RecordedGeneration {
  const { startedAt, endedAt, claimNanos, ...record } = fields;
  return { ...record, durationMs: Math.min(Math.max(0, endedAt - startedAt), maxRecordedMs), chargedNanos: claimNanos };
}
