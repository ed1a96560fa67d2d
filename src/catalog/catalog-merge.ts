import { Value } from 'typebox/value';
import { ModelSchema, PricingSchema, type ModelEntry } from '../config/config-schema.ts';
import { checkWholeNanoPrices } from '../config/load-config.ts';
import type { PriceSource } from '../domain/price-version.ts';

export type Pricing = NonNullable<ModelEntry['pricing']>;

/** What an operator set for one model at runtime, over gateway.yaml: each part absent changes nothing. */
export interface RuntimeOverride {
  modelId: string;
  /** A whole entry that replaces the file's (or adds a model the file does not have). */
  entry?: ModelEntry;
  /** Prices over whichever entry serves. */
  pricing?: Pricing;
  /** Switched on or off whatever the entry says. */
  active?: boolean;
}

/** A model of the merged catalog: the entry that serves, and where each part of it comes from. */
export interface MergedModel {
  entry: ModelEntry;
  /** `runtime`: the admin API's entry replaces (or adds to) the file's; `file`: gateway.yaml's entry. */
  source: PriceSource;
  /** Where its prices come from: a runtime price or entry, or the file. */
  pricingSource: PriceSource;
  /** The file's entry for the id, when it has one (what deleting the runtime entry falls back to). */
  fileEntry: ModelEntry | undefined;
  override: RuntimeOverride | undefined;
}

/**
 * The catalog an operator sees, file + runtime overrides: for each id, the runtime entry when there is one,
 * else the file's; then runtime prices over it, then the runtime switch. Overrides of an id that has neither
 * entry are kept aside (they serve again if the file brings the id back). File models first, in the file's
 * order, then models only the runtime has, by id.
 */
export function mergeCatalog(fileModels: readonly ModelEntry[], overrides: readonly RuntimeOverride[]): MergedModel[] {
  const byId = new Map(overrides.map((override) => [override.modelId, override]));
  const fileIds = new Set(fileModels.map((model) => model.id));
  const onlyRuntime = overrides
    .filter((override) => override.entry !== undefined && !fileIds.has(override.modelId))
    .sort((a, b) => (a.modelId < b.modelId ? -1 : 1));
  const merged: MergedModel[] = [];
  for (const fileEntry of fileModels) merged.push(mergedModel(fileEntry, byId.get(fileEntry.id)));
  for (const override of onlyRuntime) merged.push(mergedModel(undefined, override));
  return merged;
}

function mergedModel(fileEntry: ModelEntry | undefined, override: RuntimeOverride | undefined): MergedModel {
  const base = override?.entry ?? fileEntry;
  if (!base) throw new Error(`model "${override?.modelId}" has neither a file nor a runtime entry`);
  const pricing = override?.pricing ?? base.pricing;
  const active = override?.active ?? base.isActive;
  const entry: ModelEntry = {
    ...base,
    ...(pricing === undefined ? {} : { pricing }),
    ...(active === undefined ? {} : { isActive: active }),
  };
  return {
    entry,
    source: override?.entry ? 'runtime' : 'file',
    pricingSource: override?.entry || override?.pricing ? 'runtime' : 'file',
    fileEntry,
    override,
  };
}

/**
 * Whether stored prices are whole nano-USD, as every way in checks them now: one stored before that check would
 * be charged rounded on every unit, so it is left out, said in `problems`, as an unreadable one is.
 */
function wholeNanoPrices(pricing: ModelEntry['pricing'], what: string, problems: string[]): boolean {
  const before = problems.length;
  checkWholeNanoPrices(pricing, '', (at, problem) => problems.push(`${what} is ignored: at ${at}: ${problem}`));
  return problems.length === before;
}

/** A stored runtime row as an override: parts this release cannot read are left out (and named in `problems`). */
export function overrideFromRow(
  row: { modelId: string; entry: unknown; pricing: unknown; active: boolean | null },
  problems: string[],
): RuntimeOverride {
  const override: RuntimeOverride = { modelId: row.modelId };
  if (row.entry !== null) {
    if (!Value.Check(ModelSchema, row.entry) || row.entry.id !== row.modelId)
      problems.push(`runtime entry of model "${row.modelId}" is unreadable: ignored`);
    else if (wholeNanoPrices(row.entry.pricing, `runtime entry of model "${row.modelId}"`, problems))
      override.entry = row.entry;
  }
  if (row.pricing !== null) {
    if (!Value.Check(PricingSchema, row.pricing))
      problems.push(`runtime prices of model "${row.modelId}" are unreadable: ignored`);
    else if (wholeNanoPrices(row.pricing, `runtime prices of model "${row.modelId}"`, problems))
      override.pricing = row.pricing;
  }
  if (row.active !== null) override.active = row.active;
  return override;
}
