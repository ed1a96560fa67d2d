import { asc, eq, sql } from 'drizzle-orm';
import type { Database } from './database.ts';
import { providerKeys } from './schema.ts';

export type ProviderKeyRow = typeof providerKeys.$inferSelect;

/** The settings of a stored provider key an operator may change. */
export interface ProviderKeyChanges {
  label?: string | null;
  weight?: number;
  isActive?: boolean;
}

/** The provider keys added at runtime: every row, as each process reads them whole on a change. */
export class ProviderKeysRepository {
  constructor(private readonly db: Database) {}

  async list(): Promise<ProviderKeyRow[]> {
    return this.db.select().from(providerKeys).orderBy(asc(providerKeys.createdAt), asc(providerKeys.id));
  }

  async find(id: string): Promise<ProviderKeyRow | undefined> {
    const [row] = await this.db.select().from(providerKeys).where(eq(providerKeys.id, id));
    return row;
  }

  async insert(row: Omit<ProviderKeyRow, 'createdAt' | 'updatedAt'>): Promise<ProviderKeyRow> {
    const [inserted] = await this.db.insert(providerKeys).values(row).returning();
    return inserted!;
  }

  /** The row after the change; undefined when there is no such key. */
  async update(id: string, changes: ProviderKeyChanges): Promise<ProviderKeyRow | undefined> {
    const [updated] = await this.db
      .update(providerKeys)
      .set({ ...changes, updatedAt: sql`now()` })
      .where(eq(providerKeys.id, id))
      .returning();
    return updated;
  }

  /** Whether a key was removed. */
  async delete(id: string): Promise<boolean> {
    const removed = await this.db
      .delete(providerKeys)
      .where(eq(providerKeys.id, id))
      .returning({ id: providerKeys.id });
    return removed.length > 0;
  }
}
