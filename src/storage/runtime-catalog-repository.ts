import { count, desc, eq, sql } from 'drizzle-orm';
import Type from 'typebox';
import { newId } from '../domain/ids.ts';
import type { PriceSource } from '../domain/price-version.ts';
import { rowShape } from './checked-rows.ts';
import { type Database, type PageWindow, queryRows } from './database.ts';
import { priceVersions, runtimeModels } from './schema.ts';

const latestVersions = rowShape(
  'latest price versions',
  Type.Object({ model_id: Type.String(), id: Type.String(), pricing_hash: Type.String() }),
);

export type RuntimeModelRow = typeof runtimeModels.$inferSelect;
export type PriceVersionRow = typeof priceVersions.$inferSelect;

/** What a change writes over a model's runtime row: a field left out keeps its value, null clears it. */
export interface RuntimeModelChange {
  entry?: unknown;
  pricing?: unknown;
  active?: boolean | null;
}

/** A model's prices as the catalog is about to serve them, for the version they are charged under. */
export interface WantedPrice {
  modelId: string;
  pricing: unknown;
  pricingHash: string;
  source: PriceSource;
}

/** The latest version of a model's prices. */
export interface LatestPrice {
  id: string;
  pricingHash: string;
}

/**
 * Arbitrary constant naming the advisory lock every change of the runtime catalog and every sync of price
 * versions holds for its transaction: changes apply in one order across processes, and two processes starting
 * at once cannot both add the same version.
 */
const catalogLockId = 7_270_313;

/** The runtime catalog's reads and writes inside one transaction that holds the catalog's lock. */
export class LockedRuntimeCatalog {
  constructor(private readonly tx: Database) {}

  async rows(): Promise<RuntimeModelRow[]> {
    return this.tx.select().from(runtimeModels).orderBy(runtimeModels.modelId);
  }

  async write(modelId: string, change: RuntimeModelChange): Promise<void> {
    const values = {
      ...(change.entry === undefined ? {} : { entry: change.entry }),
      ...(change.pricing === undefined ? {} : { pricing: change.pricing }),
      ...(change.active === undefined ? {} : { active: change.active }),
      updatedAt: sql`now()`,
    };
    await this.tx
      .insert(runtimeModels)
      .values({ modelId, ...values })
      .onConflictDoUpdate({ target: runtimeModels.modelId, set: values });
  }

  /** Removes the model's runtime row; false when it had none. */
  async remove(modelId: string): Promise<boolean> {
    const removed = await this.tx
      .delete(runtimeModels)
      .where(eq(runtimeModels.modelId, modelId))
      .returning({ modelId: runtimeModels.modelId });
    return removed.length > 0;
  }

  /**
   * The version each model's prices are charged under: its latest version when that has the same prices, else a
   * new version (which becomes its latest). Answers every wanted model's version id.
   */
  async syncVersions(wanted: readonly WantedPrice[], actor: string | null): Promise<Map<string, LatestPrice>> {
    const latest = new Map<string, LatestPrice>();
    const rows = await queryRows(
      this.tx,
      sql`SELECT DISTINCT ON (model_id) model_id, id, pricing_hash FROM price_versions ORDER BY model_id, seq DESC`,
      latestVersions,
    );
    for (const row of rows) latest.set(row.model_id, { id: row.id, pricingHash: row.pricing_hash });
    const added = wanted
      .filter((price) => latest.get(price.modelId)?.pricingHash !== price.pricingHash)
      .map((price) => ({
        id: newId('price'),
        modelId: price.modelId,
        pricing: price.pricing,
        pricingHash: price.pricingHash,
        source: price.source,
        actor: price.source === 'runtime' ? actor : null,
      }));
    if (added.length > 0) await this.tx.insert(priceVersions).values(added);
    for (const version of added) latest.set(version.modelId, { id: version.id, pricingHash: version.pricingHash });
    return latest;
  }
}

/** The runtime catalog's table and the price versions' (migration 0013). */
export class RuntimeCatalogRepository {
  constructor(private readonly db: Database) {}

  /** Runs `work` in one transaction holding the catalog's advisory lock (released at commit or rollback). */
  async locked<T>(work: (catalog: LockedRuntimeCatalog) => Promise<T>): Promise<T> {
    return this.db.transaction(async (tx) => {
      await tx.execute(sql`SELECT pg_advisory_xact_lock(${catalogLockId})`);
      return work(new LockedRuntimeCatalog(tx));
    });
  }

  /** One page of a model's price versions, newest first, with how many it has. */
  async history(modelId: string, { offset, limit }: PageWindow): Promise<{ rows: PriceVersionRow[]; total: number }> {
    const [rows, [totals]] = await Promise.all([
      this.db
        .select()
        .from(priceVersions)
        .where(eq(priceVersions.modelId, modelId))
        .orderBy(desc(priceVersions.seq))
        .offset(offset)
        .limit(limit),
      this.db.select({ value: count() }).from(priceVersions).where(eq(priceVersions.modelId, modelId)),
    ]);
    return { rows, total: totals?.value ?? 0 };
  }
}
