import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import type { AdapterRegistry, ProviderAdapter } from '../providers/provider-adapter.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import { orderRows, type RowRouting } from './row-routing.ts';
import type { UpstreamKey } from './upstream-keys.ts';

/** The adapter families a provider offers, one per kind of generation. */
export type AdapterFamily = Exclude<keyof ProviderAdapter, 'protocol'>;

/**
 * A provider row that can serve a request: the row, its family's adapter, and the provider's settings. Made
 * afresh for each request, so the dispatch sets `target` to the provider's settings with the upstream key it
 * chose before each attempt (`withKey`), without making a new row.
 */
export interface ServingRow<F extends AdapterFamily> extends RowRef {
  row: ProviderRow;
  adapter: NonNullable<ProviderAdapter[F]>;
  target: ProviderConfig;
}

/** The row, its `target` now the provider's settings with `key` (a row without a target, a job's, is as it is). */
export function withKey<R extends RowRef>(row: R, key: UpstreamKey | undefined): R {
  if (key && isServing(row)) row.target = key.target;
  return row;
}

function isServing(row: RowRef): row is RowRef & { target: ProviderConfig } {
  return 'target' in row;
}

/** Where rows find their adapters and their providers' settings. */
export interface RowSources {
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
  /** What the models' routing strategies read; without it rows stay in priority order (a queued job's rows). */
  routing?: RowRouting;
}

/**
 * The one way a generation picks its provider rows: the model's rows whose protocol offers `family`, best
 * first by the model's routing strategy. Empty when none does; the caller names the refusal in its own terms.
 */
export function servingRows<F extends AdapterFamily>(
  sources: RowSources,
  model: CatalogModel,
  family: F,
): Array<ServingRow<F>> {
  const rows: Array<ServingRow<F>> = [];
  for (const row of model.rows) {
    const adapter = sources.adapters.get(row.protocol)?.[family] as ProviderAdapter[F];
    const target = sources.providers.get(row.providerId);
    if (adapter && target)
      rows.push({ providerId: row.providerId, upstreamModel: row.upstreamModel, row, adapter, target });
  }
  if (model.routing !== 'priority' && sources.routing) orderRows(rows, model.routing, sources.routing);
  return rows;
}
