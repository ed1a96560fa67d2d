import type { CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import type { AdapterRegistry, ProviderAdapter } from '../providers/provider-adapter.ts';
import type { RowRef } from '../domain/provider-rows.ts';

/** The adapter families a provider offers, one per kind of generation. */
export type AdapterFamily = Exclude<keyof ProviderAdapter, 'protocol'>;

/** A provider row that can serve a request: the row, its family's adapter, and the provider's settings. */
export interface ServingRow<F extends AdapterFamily> extends RowRef {
  row: ProviderRow;
  adapter: NonNullable<ProviderAdapter[F]>;
  target: ProviderConfig;
}

/** Where rows find their adapters and their providers' settings. */
export interface RowSources {
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
}

/**
 * The one way a generation picks its provider rows: the model's rows whose protocol offers `family`, best
 * first. Empty when none does; the caller names the refusal in its own terms.
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
  return rows;
}
