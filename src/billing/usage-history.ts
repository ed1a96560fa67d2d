import { nanosToUsd } from '../domain/money.ts';
import type { GenerationRow, LedgerRepository } from '../storage/ledger-repository.ts';

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
  return record;
}

export class UsageHistory {
  constructor(private readonly ledger: LedgerRepository) {}

  async page(accountId: string, offset: number, limit: number): Promise<{ results: GenerationRecord[]; total: number; offset: number; limit: number }> {
    const { rows, total } = await this.ledger.listGenerations(accountId, offset, limit);
    return { results: rows.map(generationRecord), total, offset, limit };
  }
}
