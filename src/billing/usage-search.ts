import { nanosToUsd } from '../domain/money.ts';
import type { UsageSearchFilter, UsageSearchRepository } from '../storage/usage-search-repository.ts';
import type { GenerationRow } from '../storage/usage-repository.ts';
import { type AuditedGenerationRecord, auditedRecord, type UsagePage } from './usage-history.ts';

export type { UsageSearchFilter };

/** The operator's page of usage across accounts, with the totals of everything the filter matches. */
export interface UsageSearchPage extends UsagePage<AuditedGenerationRecord> {
  totals: { generations: number; usdCost: number };
}

/** Records read from the database per page of an export: the most an export holds in memory at once. */
const exportBatchSize = 500;

/** The export's columns, in order; its first line names them. */
const csvColumns = [
  'createdAt',
  'id',
  'accountId',
  'apiKeyId',
  'model',
  'modality',
  'status',
  'usdCost',
  'durationMs',
  'providerId',
  'upstreamModel',
  'usage',
] as const;

/**
 * One CSV cell: quoted when it holds a separator, a quote or a line break, and, when it starts with a
 * character a spreadsheet would read as a formula (`=`, `+`, `-`, `@`, tab, carriage return), prefixed with
 * `'` so it stays text (CSV injection). Model names and usage come from clients and upstreams.
 */
export function csvCell(value: string | number | undefined | null): string {
  if (value === undefined || value === null) return '';
  let text = String(value);
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

function csvLine(row: GenerationRow): string {
  const route = auditedRecord(row).route;
  const cells: Record<(typeof csvColumns)[number], string | number | null | undefined> = {
    createdAt: row.createdAt.toISOString(),
    id: row.id,
    accountId: row.accountId,
    apiKeyId: row.apiKeyId,
    model: row.model,
    modality: row.modality,
    status: row.status,
    usdCost: nanosToUsd(row.usdCostNanos),
    durationMs: row.durationMs,
    providerId: route?.providerId,
    upstreamModel: route?.upstreamModel,
    usage: row.usage === null ? null : JSON.stringify(row.usage),
  };
  return `${csvColumns.map((column) => csvCell(cells[column])).join(',')}\r\n`;
}

/** Usage across accounts for the operator console: filtered pages with totals, and the CSV export. */
export class UsageSearch {
  constructor(private readonly repository: UsageSearchRepository) {}

  async page(filter: UsageSearchFilter, window: { offset: number; limit: number }): Promise<UsageSearchPage> {
    const [{ rows }, totals] = await Promise.all([
      this.repository.page(filter, window),
      this.repository.totals(filter),
    ]);
    return {
      results: rows.map(auditedRecord),
      total: totals.generations,
      ...window,
      totals: { generations: totals.generations, usdCost: nanosToUsd(totals.costNanos) },
    };
  }

  /**
   * The matching records as CSV (RFC 4180 lines), newest first: its header line, then one line per record,
   * made as the database pages arrive, so the answer streams whatever its size.
   */
  async *csv(filter: UsageSearchFilter): AsyncGenerator<string> {
    yield `${csvColumns.join(',')}\r\n`;
    let lines = '';
    let batched = 0;
    for await (const row of this.repository.walk(filter, exportBatchSize)) {
      lines += csvLine(row);
      if (++batched === 100) {
        yield lines;
        lines = '';
        batched = 0;
      }
    }
    if (lines !== '') yield lines;
  }
}
