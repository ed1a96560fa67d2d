import type { WebhooksConfig } from '../config/load-config.ts';
import { webhookBody } from '../domain/webhook-events.ts';
import type { AttemptOutcome, ClaimedDelivery, WebhooksRepository } from '../storage/webhooks-repository.ts';
import { ClaimingWorker } from './claiming-worker.ts';
import type { SendResult } from './webhook-sender.ts';

export interface WebhookDeliveryOptions {
  deliveries: Pick<WebhooksRepository, 'claim' | 'finishAttempt' | 'pruneCapAlerts' | 'pruneFinished'>;
  send: (message: { url: string; secret: string; id: string; body: string; now: Date }) => Promise<SendResult>;
  /** The endpoint's `whsec_` secret from its sealed form. */
  secretOf: (sealedSecret: string) => string;
  config: WebhooksConfig;
  /** This process: the owner written on its claims. */
  owner: string;
  onError: (error: unknown, deliveryId?: string) => void;
  clock?: () => Date;
}

/** Longest backoff: the doubling stops at 2^16 times the base, and the wait at a day whatever the base. */
const maxDoublings = 16;
const maxBackoffMs = 86_400_000;

/**
 * How often ended deliveries past `retentionDays` are deleted, in batches of how many, and how many batches a
 * sweep runs at most (a sweep deletes up to 100,000 rows every ten minutes, far more than a busy gateway makes).
 */
const pruneEveryMs = 10 * 60 * 1000;
const pruneBatch = 1000;
const maxPruneBatches = 100;
/** A cap alert's mark outlives its window (a month at most) by this many days before it is deleted. */
const capAlertMarkDays = 35;

/**
 * How long a delivery waits after its `attempt`th attempt failed: `baseMs` doubled at each attempt, at most a
 * day, or the receiver's own retry-after when it asks for longer.
 */
export function retryDelayMs(baseMs: number, attempt: number, retryAfterMs: number | undefined): number {
  return Math.max(Math.min(baseMs * 2 ** Math.min(attempt - 1, maxDoublings), maxBackoffMs), retryAfterMs ?? 0);
}

/**
 * Runs `deleteBatch` (which deletes at most `batch` rows and says how many it deleted) again while it deletes
 * a whole batch, at most `maxBatches` times: what a sweep leaves waits for the next. The rows deleted.
 */
export async function deleteInBatches(
  deleteBatch: (batch: number) => Promise<number>,
  { batch, maxBatches }: { batch: number; maxBatches: number },
): Promise<number> {
  let deleted = 0;
  for (let round = 0; round < maxBatches; round++) {
    const count = await deleteBatch(batch);
    deleted += count;
    if (count < batch) break;
  }
  return deleted;
}

/**
 * Sends the durable webhook deliveries from this process: claims due ones (across processes, each by one
 * process at a time, `FOR UPDATE SKIP LOCKED`), sends each once under its claim, and writes the attempt and
 * what follows. A 5xx, a 429, a time-out or a failed connection is retried after `retryBaseMs` doubled at
 * each attempt, until `maxAttempts`; anything else not 2xx is given up at once. A process killed while
 * sending leaves its claim to run out, and another (or it, restarted) sends the same delivery again under
 * the same `webhook-id`: at least once.
 */
export class WebhookDeliveryWorker extends ClaimingWorker {
  private readonly running = new Set<Promise<void>>();
  private readonly clock: () => Date;
  private prunedAt = 0;

  constructor(private readonly options: WebhookDeliveryOptions) {
    super({ pollMs: options.config.idlePollMs, concurrency: options.config.concurrency, onError: options.onError });
    this.clock = options.clock ?? (() => new Date());
  }

  protected underWay(): Iterable<Promise<void>> {
    return this.running;
  }

  protected async claim(): Promise<void> {
    const { config, deliveries, owner } = this.options;
    await this.prune();
    const free = config.concurrency - this.running.size;
    if (free <= 0) return;
    const claimed = await deliveries.claim(owner, { limit: free, claimSeconds: config.claimSeconds });
    for (const delivery of claimed) {
      const run: Promise<void> = this.deliver(delivery)
        .catch((error: unknown) => this.options.onError(error, delivery.id))
        .finally(() => {
          this.running.delete(run);
          this.wake();
        });
      this.running.add(run);
    }
    // A full batch may leave more due: look again at once.
    if (claimed.length === free) this.wake();
  }

  /**
   * The delivery log is kept `retentionDays` (0: for ever); ended deliveries older than that are deleted. The
   * marks of cap alerts of windows that have ended (a day, week or month) go too: only the current window's
   * marks keep an alert from being sent twice.
   */
  private async prune(): Promise<void> {
    const { retentionDays } = this.options.config;
    const now = this.clock().getTime();
    if (now - this.prunedAt < pruneEveryMs) return;
    this.prunedAt = now;
    const { deliveries, onError } = this.options;
    const sweep = (deleteBatch: (batch: number) => Promise<number>) =>
      // A failed sweep waits for the next one; it never holds back the deliveries.
      deleteInBatches(deleteBatch, { batch: pruneBatch, maxBatches: maxPruneBatches }).catch(onError);
    await sweep((batch) => deliveries.pruneCapAlerts(new Date(now - capAlertMarkDays * 86_400_000), batch));
    if (retentionDays === 0) return;
    const before = new Date(now - retentionDays * 86_400_000);
    await sweep((batch) => deliveries.pruneFinished(before, batch));
  }

  private async deliver(delivery: ClaimedDelivery): Promise<void> {
    const { deliveries, owner } = this.options;
    const unsent = this.unsentReason(delivery);
    const outcome: AttemptOutcome = unsent
      ? { statusCode: null, latencyMs: 0, error: unsent, responseExcerpt: null, next: { state: 'failed' } }
      : this.outcomeOf(delivery, await this.attempt(delivery));
    await deliveries.finishAttempt(delivery, owner, outcome);
  }

  /**
   * Why the delivery is given up without sending: its endpoint is off, or its earlier attempts were cut short by
   * processes that stopped while sending until none is left (a delivery that kills its process ends too).
   */
  private unsentReason(delivery: ClaimedDelivery): string | undefined {
    if (!delivery.endpoint.isActive) return 'the endpoint is disabled';
    if (delivery.attempt > this.options.config.maxAttempts)
      return `given up: ${this.options.config.maxAttempts} attempts were cut short by processes that stopped`;
    return undefined;
  }

  private async attempt(delivery: ClaimedDelivery): Promise<SendResult> {
    let secret: string;
    try {
      secret = this.options.secretOf(delivery.endpoint.sealedSecret);
    } catch {
      // Sealed under another GATEWAY_SECRET: no attempt can sign it. The error names no part of it.
      return {
        statusCode: null,
        latencyMs: 0,
        error: 'the signing secret could not be read (was GATEWAY_SECRET changed?)',
        responseExcerpt: null,
        delivered: false,
        retryable: false,
      };
    }
    return this.options.send({
      url: delivery.endpoint.url,
      secret,
      id: delivery.id,
      body: webhookBody({ type: delivery.eventType, createdAt: delivery.createdAt, data: delivery.data }),
      now: this.clock(),
    });
  }

  private outcomeOf(delivery: ClaimedDelivery, sent: SendResult): AttemptOutcome {
    const { config } = this.options;
    const { statusCode, latencyMs, error, responseExcerpt } = sent;
    const logged = { statusCode, latencyMs, error, responseExcerpt };
    if (sent.delivered) return { ...logged, next: { state: 'succeeded' } };
    if (!sent.retryable || delivery.attempt >= config.maxAttempts) return { ...logged, next: { state: 'failed' } };
    // The backoff, or the receiver's own retry-after when it asks for longer.
    const delay = retryDelayMs(config.retryBaseMs, delivery.attempt, sent.retryAfterMs);
    return { ...logged, next: { state: 'queued', runAfter: new Date(this.clock().getTime() + delay) } };
  }
}
