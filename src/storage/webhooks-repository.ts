import { and, count, desc, eq, inArray, isNull, sql } from 'drizzle-orm';
import Type from 'typebox';
import { webhookRowId, type WebhookDeliveryState } from '../domain/webhook-events.ts';
import { rowShape, timestampText } from './checked-rows.ts';
import { type Database, type PageWindow, queryRows } from './database.ts';
import { claimInTurns } from './webhook-claim-turns.ts';
import { accounts, apiKeys, webhookAttempts, webhookDeliveries, webhookEndpoints } from './schema.ts';

/** A claimed delivery and its endpoint; `data` is the event's JSON, which its reader checks. */
const claimedRows = rowShape(
  'claim webhook deliveries',
  Type.Object({
    id: Type.String(),
    event_type: Type.String(),
    data: Type.Unknown(),
    created_at: timestampText,
    attempts: Type.Integer(),
    endpoint_id: Type.String(),
    url: Type.String(),
    is_active: Type.Boolean(),
    sealed_secret: Type.String(),
  }),
);

const prunedDeliveries = rowShape('prune webhook deliveries', Type.Object({ id: Type.String() }));

const prunedCapAlerts = rowShape('prune cap alerts', Type.Object({ id: Type.String() }));

export type WebhookEndpointRow = typeof webhookEndpoints.$inferSelect;
export type WebhookDeliveryRow = typeof webhookDeliveries.$inferSelect;
export type WebhookAttemptRow = typeof webhookAttempts.$inferSelect;

export interface EndpointChanges {
  url?: string;
  description?: string;
  eventTypes?: string[];
  isActive?: boolean;
}

/** A claimed delivery with what sending it needs of its endpoint. */
export interface ClaimedDelivery {
  id: string;
  eventType: string;
  data: unknown;
  createdAt: Date;
  /** This claim's attempt, counted when claimed: an attempt cut by a crash counts too. */
  attempt: number;
  endpoint: { id: string; url: string; isActive: boolean; sealedSecret: string };
}

/** What one attempt came to, and what follows for the delivery. */
export interface AttemptOutcome {
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  next: { state: 'succeeded' | 'failed' } | { state: 'queued'; runAfter: Date };
}

/**
 * The SQL of webhooks: endpoints, the durable delivery queue and its log. Events are queued by the triggers of
 * migration 0015 in their cause's transaction; `queueTestOnce` queues the one event an account sends itself.
 */
export class WebhooksRepository {
  constructor(private readonly db: Database) {}

  /**
   * Adds the endpoint unless its account already has `maxPerAccount` (undefined then). The account's endpoints
   * are counted under a lock of its own (a transaction's advisory lock), so requests sent side by side cannot pass
   * the bound together; the account's keys are locked as every endpoint change locks them (`lockKeysOf`).
   */
  async createEndpoint(
    row: Omit<WebhookEndpointRow, 'createdAt' | 'updatedAt'>,
    maxPerAccount: number,
  ): Promise<WebhookEndpointRow | undefined> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(hashtextextended(${`webhook-endpoints:${row.accountId}`}, 0))`);
      await lockKeysOf(tx, row.accountId);
      const [held] = await tx
        .select({ value: count() })
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.accountId, row.accountId));
      if ((held?.value ?? 0) >= maxPerAccount) return undefined;
      const [inserted] = await tx.insert(webhookEndpoints).values(row).returning();
      return inserted;
    });
  }

  async listEndpoints(accountId: string): Promise<WebhookEndpointRow[]> {
    return this.db
      .select()
      .from(webhookEndpoints)
      .where(eq(webhookEndpoints.accountId, accountId))
      .orderBy(webhookEndpoints.createdAt, webhookEndpoints.id);
  }

  async findEndpoint(accountId: string, id: string): Promise<WebhookEndpointRow | undefined> {
    const [row] = await this.db.select().from(webhookEndpoints).where(owned(accountId, id));
    return row;
  }

  async updateEndpoint(
    accountId: string,
    id: string,
    changes: EndpointChanges & { sealedSecret?: string },
  ): Promise<WebhookEndpointRow | undefined> {
    return this.db.transaction(async (tx) => {
      await lockKeysOf(tx, accountId);
      const [row] = await tx
        .update(webhookEndpoints)
        .set({ ...changes, updatedAt: sql`now()` })
        .where(owned(accountId, id))
        .returning();
      return row;
    });
  }

  /** Deletes the endpoint and (cascading) its deliveries and their log; false when it was not the account's. */
  async deleteEndpoint(accountId: string, id: string): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      await lockKeysOf(tx, accountId);
      const rows = await tx.delete(webhookEndpoints).where(owned(accountId, id)).returning({ id: webhookEndpoints.id });
      return rows.length === 1;
    });
  }

  /**
   * Queues a `webhook.test` event for the endpoint unless one is still being delivered (undefined then): the
   * endpoint's row is locked meanwhile, so requests sent side by side queue one, not one each.
   */
  async queueTestOnce(endpoint: { id: string; accountId: string }, data: unknown): Promise<string | undefined> {
    return this.db.transaction(async (tx) => {
      await tx
        .select({ id: webhookEndpoints.id })
        .from(webhookEndpoints)
        .where(eq(webhookEndpoints.id, endpoint.id))
        .for('update');
      const [pending] = await tx
        .select({ id: webhookDeliveries.id })
        .from(webhookDeliveries)
        .where(
          and(
            eq(webhookDeliveries.endpointId, endpoint.id),
            eq(webhookDeliveries.eventType, 'webhook.test'),
            isNull(webhookDeliveries.finishedAt),
          ),
        )
        .limit(1);
      if (pending) return undefined;
      const id = webhookRowId('msg');
      await tx
        .insert(webhookDeliveries)
        .values({ id, endpointId: endpoint.id, accountId: endpoint.accountId, eventType: 'webhook.test', data });
      return id;
    });
  }

  /** One page of an endpoint's deliveries, newest first, with each one's attempts and the count of all. */
  async deliveriesOf(
    endpointId: string,
    { offset, limit }: PageWindow,
  ): Promise<{ deliveries: WebhookDeliveryRow[]; attempts: WebhookAttemptRow[]; total: number }> {
    const where = eq(webhookDeliveries.endpointId, endpointId);
    const [deliveries, [totals]] = await Promise.all([
      this.db
        .select()
        .from(webhookDeliveries)
        .where(where)
        .orderBy(desc(webhookDeliveries.createdAt), desc(webhookDeliveries.id))
        .offset(offset)
        .limit(limit),
      this.db.select({ value: count() }).from(webhookDeliveries).where(where),
    ]);
    const attempts =
      deliveries.length === 0
        ? []
        : await this.db
            .select()
            .from(webhookAttempts)
            .where(
              inArray(
                webhookAttempts.deliveryId,
                deliveries.map((delivery) => delivery.id),
              ),
            )
            .orderBy(webhookAttempts.attempt);
    return { deliveries, attempts, total: totals?.value ?? 0 };
  }

  /**
   * Claims up to `limit` due deliveries for `owner` for `claimSeconds`: queued ones, and those whose claim ran
   * out (their process died while sending: at-least-once, under the same id). Rows another process is claiming
   * now are skipped. The attempt is counted here, so a delivery that keeps killing its process still ends.
   * Deliveries are taken in turns between accounts, and within an account between its endpoints
   * (`claimInTurns`).
   */
  async claim(
    owner: string,
    { limit, claimSeconds }: { limit: number; claimSeconds: number },
  ): Promise<ClaimedDelivery[]> {
    if (limit <= 0) return [];
    const rows = await queryRows(this.db, claimInTurns({ owner, limit, claimSeconds }), claimedRows);
    return rows.map((row) => ({
      id: row.id,
      eventType: row.event_type,
      data: row.data,
      createdAt: new Date(row.created_at),
      attempt: row.attempts,
      endpoint: { id: row.endpoint_id, url: row.url, isActive: row.is_active, sealedSecret: row.sealed_secret },
    }));
  }

  /**
   * Writes the attempt to the log and the delivery's next state, in one transaction, if `owner` still holds the
   * claim (a process that stalled past it changes nothing: another has taken the delivery over).
   */
  async finishAttempt(delivery: ClaimedDelivery, owner: string, outcome: AttemptOutcome): Promise<boolean> {
    return this.db.transaction(async (tx) => {
      const { next } = outcome;
      const state: WebhookDeliveryState = next.state;
      const ended = await tx
        .update(webhookDeliveries)
        .set({
          state,
          claimedBy: null,
          claimExpiresAt: null,
          lastStatus: outcome.statusCode,
          lastError: outcome.error,
          updatedAt: sql`now()`,
          ...(next.state === 'queued' ? { runAfter: next.runAfter } : { finishedAt: sql`now()` }),
        })
        .where(
          and(
            eq(webhookDeliveries.id, delivery.id),
            eq(webhookDeliveries.claimedBy, owner),
            eq(webhookDeliveries.state, 'delivering'),
          ),
        )
        .returning({ id: webhookDeliveries.id });
      if (ended.length !== 1) return false;
      await tx.insert(webhookAttempts).values({
        id: webhookRowId('att'),
        deliveryId: delivery.id,
        attempt: delivery.attempt,
        statusCode: outcome.statusCode,
        latencyMs: outcome.latencyMs,
        error: outcome.error,
        responseExcerpt: outcome.responseExcerpt,
      });
      return true;
    });
  }

  /** Deletes up to `limit` deliveries (and their log) that ended before `before`; answers how many. */
  async pruneFinished(before: Date, limit: number): Promise<number> {
    const rows = await queryRows(
      this.db,
      sql`DELETE FROM webhook_deliveries WHERE id IN (
            SELECT id FROM webhook_deliveries WHERE finished_at IS NOT NULL AND finished_at < ${before.toISOString()}::timestamptz
             LIMIT ${limit})
          RETURNING id`,
      prunedDeliveries,
    );
    return rows.length;
  }

  /**
   * Deletes up to `limit` marks of cap alerts made before `before` (windows of a day, a week or a month, long
   * ended; a total cap's marks stay, as its window never ends); answers how many.
   */
  async pruneCapAlerts(before: Date, limit: number): Promise<number> {
    const rows = await queryRows(
      this.db,
      sql`DELETE FROM api_key_cap_alerts WHERE ctid IN (
            SELECT ctid FROM api_key_cap_alerts WHERE cap <> 'total' AND created_at < ${before.toISOString()}::timestamptz
             LIMIT ${limit})
          RETURNING api_key_id AS id`,
      prunedCapAlerts,
    );
    return rows.length;
  }

  async balanceAlert(accountId: string): Promise<bigint | null | undefined> {
    const [row] = await this.db
      .select({ threshold: accounts.balanceAlertNanos })
      .from(accounts)
      .where(eq(accounts.id, accountId));
    return row === undefined ? undefined : row.threshold;
  }

  /** Sets (or, with null, removes) the low-balance threshold; the settlement trigger compares against it. */
  async setBalanceAlert(accountId: string, thresholdNanos: bigint | null): Promise<void> {
    await this.db.update(accounts).set({ balanceAlertNanos: thresholdNanos }).where(eq(accounts.id, accountId));
  }
}

/**
 * Locks the account's keys in id order before an endpoint is added, changed or removed. The endpoints' trigger (migration
 * 0015) locks keys after the row: by then an insert shares its account's row (its foreign key) and a delete
 * holds its endpoint's. Every settlement (a batch, a media job's) locks keys first, then the account, then shares
 * the rows of the endpoints its events go to: it would deadlock with either. Taking the keys first is the
 * settlements' order. An update takes them first too: its trigger locks them after its row, which a removal of
 * the same endpoint (keys, then row) would otherwise wait on crosswise.
 */
async function lockKeysOf(tx: Database, accountId: string): Promise<void> {
  await tx
    .select({ id: apiKeys.id })
    .from(apiKeys)
    .where(eq(apiKeys.accountId, accountId))
    .orderBy(apiKeys.id)
    .for('update');
}

function owned(accountId: string, id: string) {
  return and(eq(webhookEndpoints.id, id), eq(webhookEndpoints.accountId, accountId));
}
