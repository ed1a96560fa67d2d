/** A provider row as the breakers and the operator's windows know it: the provider and the upstream model it is asked for. */
export interface RowRef {
  providerId: string;
  upstreamModel: string;
  /** The row stands in for its model's real providers while none is active (`standIn` in gateway.yaml). */
  standIn?: boolean;
}

export type BreakerState = 'closed' | 'open' | 'half-open';

/** What the dispatch tells the operator's windows (logs, metrics) as it goes. */
export interface DispatchEvents {
  fallback(event: { modelId: string; from: RowRef; to: RowRef; reason: string }): void;
  retry(event: { modelId: string; row: RowRef; afterMs: number; reason: string }): void;
}
