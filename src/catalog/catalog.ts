import type { Capabilities, InputModality, OutputModality } from '../domain/capabilities.ts';
import { GatewayError } from '../domain/errors.ts';
import { modelPricingFrom, type ModelPricing } from '../domain/model-pricing.ts';
import type { GatewayConfig } from '../config/load-config.ts';
import type { Protocol, RoutingStrategy } from '../config/config-schema.ts';

/** One way to serve a catalog model: a provider and the upstream model id requests are rewritten to. */
export interface ProviderRow {
  providerId: string;
  protocol: Protocol;
  upstreamModel: string;
  priority: number;
  capabilities: Capabilities | undefined;
  /** The row's share of requests under `routing: weighted`. */
  weight: number;
  /**
   * What the row costs the operator upstream, for `routing: price`: USD for a million input tokens plus a
   * million output tokens (the row's `cost`); undefined when the row names no cost.
   */
  operatorCost: number | undefined;
  /** Serves only while no other row of its model is active (`standIn` in gateway.yaml). */
  standIn?: boolean;
}

export interface CatalogModel {
  modelId: string;
  name: string | undefined;
  revision: number;
  inputModalities: readonly InputModality[];
  outputModalities: readonly OutputModality[];
  pricing: ModelPricing | undefined;
  /** The price version of `pricing` (price_versions.id): usage records charged at these prices name it. */
  priceVersion: string | undefined;
  /** Text: the most output tokens one completion may make; held and sent when the client sets no limit. */
  maxOutputTokens: number | undefined;
  /** Active rows only, best first: lowest priority number, then the order of the configuration file. */
  rows: readonly ProviderRow[];
  /** How each request orders the rows (gateway/row-routing.ts); `priority` keeps them as they are. */
  routing: RoutingStrategy;
  /** Whether the configuration names the strategy: only then is it written in the usage record's route. */
  routingNamed: boolean;
  createdAt: string | undefined;
  updatedAt: string | undefined;
}

/** The price version of each model's prices as the catalog serves them, by model id. */
export type PriceVersionIds = ReadonlyMap<string, string>;

export interface ModalityFilter {
  inputModalities?: readonly string[];
  outputModalities?: readonly string[];
}

/** The catalog as configured: models that are switched on and have at least one active provider row. */
export class Catalog {
  private models: ReadonlyMap<string, CatalogModel>;
  /** Ids of the configured models the operator switched off (an entry's `isActive: false`, or the admin API's switch). */
  private switchedOff: ReadonlySet<string>;

  constructor(config: Pick<GatewayConfig, 'models' | 'providers'>, priceVersions: PriceVersionIds = new Map()) {
    this.models = catalogModels(config, priceVersions);
    this.switchedOff = switchedOffIds(config);
  }

  /**
   * The catalog of a reloaded configuration, for the requests that resolve their model from now on; a request
   * that resolved its model before keeps it, with its rows and prices, to the end.
   */
  replace(config: Pick<GatewayConfig, 'models' | 'providers'>, priceVersions: PriceVersionIds = new Map()): void {
    this.models = catalogModels(config, priceVersions);
    this.switchedOff = switchedOffIds(config);
  }

  list(filter: ModalityFilter = {}): CatalogModel[] {
    const hasAll = (offered: readonly string[], wanted: readonly string[] | undefined) =>
      !wanted || wanted.every((item) => offered.includes(item));
    return [...this.models.values()].filter(
      (model) =>
        hasAll(model.inputModalities, filter.inputModalities) &&
        hasAll(model.outputModalities, filter.outputModalities),
    );
  }

  find(modelId: string): CatalogModel | undefined {
    return this.models.get(modelId);
  }

  /** The model a catalog read names, or the spec's 404 when it is missing or inactive. */
  get(modelId: string): CatalogModel {
    const model = this.models.get(modelId);
    if (!model) throw new GatewayError('GW_NOT_FOUND', `model "${modelId}" not found`);
    return model;
  }

  /**
   * The model a generation request names, or the spec's 400 when it is not served: switched off by the operator,
   * or without an active provider row (or not configured).
   */
  resolve(modelId: string): CatalogModel {
    const model = this.models.get(modelId);
    if (model) return model;
    throw new GatewayError(
      'GW_MODEL_NOT_AVAILABLE',
      this.switchedOff.has(modelId)
        ? `model "${modelId}" is not available: the operator has switched it off`
        : `model "${modelId}" is not available: no active provider serves it`,
    );
  }
}

function switchedOffIds(config: Pick<GatewayConfig, 'models'>): Set<string> {
  return new Set(config.models.filter((entry) => entry.isActive === false).map((entry) => entry.id));
}

/**
 * The rows that serve: a stand-in row (`standIn: true`, the sandbox's made-up output for a model whose provider
 * has no key) only while no other row of the model is active, so that it is never the fallback that serves, and
 * bills at the model's price, a request a real provider failed.
 */
function standInsOnlyWhenAlone<R extends { row: { standIn?: boolean } }>(rows: R[]): R[] {
  const real = rows.filter((candidate) => candidate.row.standIn !== true);
  return real.length > 0 ? real : rows;
}

/** The models that are switched on and have at least one active provider row, each with its rows best first. */
function catalogModels(
  config: Pick<GatewayConfig, 'models' | 'providers'>,
  priceVersions: PriceVersionIds,
): Map<string, CatalogModel> {
  const models = new Map<string, CatalogModel>();
  for (const entry of config.models) {
    if (entry.isActive === false) continue;
    const rows = standInsOnlyWhenAlone(
      entry.providers
        .map((row, order) => ({ row, order, provider: config.providers.get(row.provider) }))
        .filter((candidate) => candidate.provider?.active === true),
    )
      .sort((a, b) => (a.row.priority ?? 0) - (b.row.priority ?? 0) || a.order - b.order)
      .map(({ row, provider }) => ({
        providerId: row.provider,
        protocol: provider!.protocol,
        upstreamModel: row.model,
        priority: row.priority ?? 0,
        capabilities: row.capabilities as Capabilities | undefined,
        weight: row.weight ?? 1,
        operatorCost: row.cost ? (row.cost.inputPerMTok ?? 0) + (row.cost.outputPerMTok ?? 0) : undefined,
        ...(row.standIn === true ? { standIn: true } : {}),
      }));
    if (rows.length === 0) continue;
    models.set(entry.id, {
      modelId: entry.id,
      name: entry.name,
      revision: entry.revision ?? 1,
      inputModalities: entry.inputModalities ?? ['text'],
      outputModalities: entry.outputModalities ?? ['text'],
      pricing: modelPricingFrom(entry.pricing),
      priceVersion: priceVersions.get(entry.id),
      maxOutputTokens: entry.limits?.maxOutputTokens,
      rows,
      routing: entry.routing ?? 'priority',
      routingNamed: entry.routing !== undefined,
      createdAt: entry.createdAt,
      updatedAt: entry.updatedAt,
    });
  }
  return models;
}

/** The capabilities a client sees: those of the winning row. */
export function effectiveCapabilities(model: CatalogModel): Capabilities | undefined {
  return model.rows[0]?.capabilities;
}
