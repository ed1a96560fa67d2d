import { GatewayError } from '../domain/errors.ts';
import type { GenerationRoute } from '../domain/generation-route.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { GenerationFilter, GenerationRow, UsageRepository } from '../storage/usage-repository.ts';

/** The spec's generation record (usage row). */
export interface GenerationRecord {
  id: string;
  userId: string;
  apiKeyId?: string;
  modality: string;
  model: string;
  status: string;
  request?: unknown;
  usage?: unknown;
  usdCost: number;
  durationMs?: number;
  /** The price version the record was charged at (absent on records older than price versions). */
  priceVersion?: string;
  createdAt: string;
}

export function generationRecord(row: GenerationRow): GenerationRecord {
  const record: GenerationRecord = {
    id: row.id,
    userId: row.accountId,
    modality: row.modality,
    model: row.model,
    status: row.status,
    usdCost: nanosToUsd(row.usdCostNanos),
    createdAt: row.createdAt.toISOString(),
  };
  if (row.apiKeyId !== null) record.apiKeyId = row.apiKeyId;
  if (row.request !== null) record.request = row.request;
  if (row.usage !== null) record.usage = row.usage;
  if (row.durationMs !== null) record.durationMs = row.durationMs;
  if (row.priceVersion !== null) record.priceVersion = row.priceVersion;
  return record;
}

/** What the operator sees of a record: the account's view, and how the generation reached its upstream. */
export type AuditedGenerationRecord = GenerationRecord & { route?: GenerationRoute };

export function auditedRecord(row: GenerationRow): AuditedGenerationRecord {
  return row.route === null ? generationRecord(row) : { ...generationRecord(row), route: row.route as GenerationRoute };
}

export interface UsagePage<Record = GenerationRecord> {
  results: Record[];
  total: number;
  offset: number;
  limit: number;
}

/** What an account was charged per UTC day and model, over the days `from` to `to` (both inclusive). */
export interface DailySpend {
  from: string;
  to: string;
  spend: Array<{ date: string; model: string; usdCost: number; generations: number }>;
}

const dayMs = 86_400_000;

export class UsageHistory {
  private readonly clock: () => Date;

  constructor(
    private readonly usage: UsageRepository,
    clock?: () => Date,
  ) {
    this.clock = clock ?? (() => new Date());
  }

  async page(accountId: string, query: GenerationFilter & { offset: number; limit: number }): Promise<UsagePage> {
    return this.pageOf(accountId, query, generationRecord);
  }

  /** The admin API's page of an account's records: with each one's route (provider row, fallbacks, request id, latencies). */
  async auditedPage(
    accountId: string,
    query: GenerationFilter & { offset: number; limit: number },
  ): Promise<UsagePage<AuditedGenerationRecord>> {
    return this.pageOf(accountId, query, auditedRecord);
  }

  /** One of the account's records; another account's answers 404 like an unknown id, so ids reveal nothing. */
  async record(accountId: string, generationId: string): Promise<GenerationRecord> {
    return this.recordOf(accountId, generationId, generationRecord);
  }

  async auditedRecord(accountId: string, generationId: string): Promise<AuditedGenerationRecord> {
    return this.recordOf(accountId, generationId, auditedRecord);
  }

  private async pageOf<T>(
    accountId: string,
    query: GenerationFilter & { offset: number; limit: number },
    view: (row: GenerationRow) => T,
  ): Promise<UsagePage<T>> {
    const { offset, limit, ...filter } = query;
    const { rows, total } = await this.usage.listGenerations(accountId, filter, { offset, limit });
    return { results: rows.map(view), total, offset, limit };
  }

  private async recordOf<T>(accountId: string, generationId: string, view: (row: GenerationRow) => T): Promise<T> {
    const row = await this.usage.findGeneration(accountId, generationId);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `generation "${generationId}" not found`);
    return view(row);
  }

  /** The last `days` UTC days, today included. */
  async daily(accountId: string, days: number): Promise<DailySpend> {
    const now = this.clock();
    const today = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
    const from = new Date(today - (days - 1) * dayMs);
    const rows = await this.usage.dailySpend(accountId, from);
    return {
      from: from.toISOString().slice(0, 10),
      to: new Date(today).toISOString().slice(0, 10),
      spend: rows.map((row) => ({
        date: row.day,
        model: row.model,
        usdCost: nanosToUsd(row.costNanos),
        generations: row.generations,
      })),
    };
  }
}
