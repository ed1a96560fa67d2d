import type { Logger } from 'pino';
import type { Static, TSchema } from 'typebox';
import { Value } from 'typebox/value';
import { ModelSchema, PricingSchema, type ModelEntry } from '../config/config-schema.ts';
import { checkModels, checkWholeNanoPrices, schemaProblems, type ProviderConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import { pricingHash, type PriceSource } from '../domain/price-version.ts';
import type { PageWindow } from '../storage/database.ts';
import type {
  LatestPrice,
  LockedRuntimeCatalog,
  RuntimeCatalogRepository,
  RuntimeModelChange,
} from '../storage/runtime-catalog-repository.ts';
import type { Catalog } from './catalog.ts';
import {
  mergeCatalog,
  overrideFromRow,
  type MergedModel,
  type Pricing,
  type RuntimeOverride,
} from './catalog-merge.ts';

/** A model as the operator sees it: the entry that serves, where it comes from, and its price version. */
export interface CatalogModelView {
  id: string;
  /** `runtime`: an entry set through the admin API replaces (or adds to) gateway.yaml's; `file`: gateway.yaml's. */
  source: PriceSource;
  /** Whether gateway.yaml has an entry for the id (deleting the runtime entry falls back to it). */
  inFile: boolean;
  /** What the runtime catalog sets over the file: a whole entry, prices, the on/off switch. */
  overrides: { entry: boolean; pricing: boolean; active: boolean };
  /** Switched on: clients may use it when one of its provider rows is active. */
  active: boolean;
  /** Clients can use it now: switched on, with an active provider row. */
  served: boolean;
  /** The version of its prices: the one usage records charged now name. */
  priceVersion?: string;
  entry: ModelEntry;
}

export interface PriceVersionView {
  id: string;
  modelId: string;
  pricing: Pricing;
  source: PriceSource;
  actor?: string;
  createdAt: string;
  /** The version the model is charged at now. */
  current: boolean;
}

export interface PriceHistoryPage {
  results: PriceVersionView[];
  total: number;
  offset: number;
  limit: number;
}

/** What the audit log keeps of a model (domain/audit-entry.ts, ModelStateSchema). */
export interface ModelAuditState {
  source: PriceSource;
  active: boolean;
  entry: Record<string, unknown>;
  priceVersion?: string;
}

export interface RuntimeCatalogOptions {
  repository: RuntimeCatalogRepository;
  /** The catalog requests resolve models in: replaced whole by each application. */
  catalog: Catalog;
  /** gateway.yaml's models as the process started with them (a reload gives new ones). */
  fileModels: readonly ModelEntry[];
  /** The providers the process runs, refilled in place by a reload: rows must name one of them. */
  providers: ReadonlyMap<string, ProviderConfig>;
  /** Tells every process sharing the database that the catalog changed (LISTEN/NOTIFY). */
  announce: () => Promise<void>;
  logger: Logger;
}

/** What one locked read of the catalog found: the overrides and each model's latest price version. */
interface CatalogState {
  overrides: RuntimeOverride[];
  versions: Map<string, LatestPrice>;
}

/**
 * The versions a model's prices are remembered by: the prices it serves and those a reload is about to serve
 * take two; a few more let prices set back and forth keep their versions.
 */
const knownPricesPerModel = 4;

/**
 * The catalog as it serves: gateway.yaml's models with the runtime overrides an operator stored in the database
 * (admin API, console). A runtime entry replaces the file's for its id until it is deleted; runtime prices and
 * the on/off switch apply over whichever entry serves; a reload of gateway.yaml keeps every override. Each
 * change is checked as gateway.yaml is (schema, providers, ranges), written under the catalog's advisory lock
 * with the price version it brings, applied in this process and announced, so every process re-reads it within
 * moments. Every model's effective prices have a version (added when they differ from the latest one), which
 * the catalog hands to the requests that resolve the model and their usage records keep.
 */
export class RuntimeCatalog {
  /** gateway.yaml's models whose prices the catalog's reads give versions to: a reload's, before they serve. */
  private fileModels: readonly ModelEntry[];
  /** gateway.yaml's models the catalog serves. */
  private servedFileModels: readonly ModelEntry[];
  private state: CatalogState = { overrides: [], versions: new Map() };
  /**
   * The versions read of each model's prices (the latest `knownPricesPerModel`), by model and prices (their
   * hash), the latest read for the same prices winning: the catalog names the version of the prices it serves,
   * also those of a file a reload is about to replace once the reload's prices got the model's latest version.
   */
  private readonly known = new Map<string, Map<string, string>>();
  private merged: MergedModel[] = [];
  /** Locked reads are numbered in lock order: one that finishes after a later one is not applied over it. */
  private readTicket = 0;
  private appliedTicket = 0;
  private refreshing: Promise<void> | undefined;
  private refreshWanted = false;

  constructor(private readonly options: RuntimeCatalogOptions) {
    this.fileModels = options.fileModels;
    this.servedFileModels = options.fileModels;
    this.applyLocally();
  }

  /**
   * Reads the overrides again, adds the price versions the catalog's prices lack and applies the result:
   * at start, when another process announced a change, and after a reload. Calls made while one runs are
   * served by one more run after it.
   */
  refresh(): Promise<void> {
    this.refreshWanted = true;
    if (this.refreshing) return this.refreshing;
    this.refreshing = (async () => {
      try {
        while (this.refreshWanted) {
          this.refreshWanted = false;
          await this.locked(async () => undefined, null);
        }
      } finally {
        this.refreshing = undefined;
      }
    })();
    return this.refreshing;
  }

  /** A refresh whose failure is logged: the catalog keeps serving what it has. */
  refreshSoon(): void {
    this.refresh().catch((error: Error) =>
      this.options.logger.error({ err: error }, 'could not read the runtime catalog; the catalog serves as before'),
    );
  }

  /**
   * gateway.yaml is being reloaded: the versions its prices lack are added before it serves (the file it
   * replaces keeps serving, each model with the version of its prices), so that the first request charged at a
   * reloaded price names its version.
   */
  versionReloaded(models: readonly ModelEntry[]): Promise<void> {
    this.fileModels = models;
    return this.refresh();
  }

  /**
   * gateway.yaml was reloaded: its models replace the file's part of the catalog at once, under every runtime
   * override, each with the version `versionReloaded` added; without it (storage did not answer), prices that
   * changed are charged without a version until the refresh that follows adds it.
   */
  fileReloaded(models: readonly ModelEntry[]): void {
    this.fileModels = models;
    this.servedFileModels = models;
    this.applyLocally();
    this.refreshSoon();
  }

  /** The providers changed in place (a runtime key made one active, or left it without one): their rows are served, or not, from now on. */
  providersChanged(): void {
    this.applyLocally();
  }

  list(): CatalogModelView[] {
    return this.merged.map((model) => this.view(model));
  }

  get(modelId: string): CatalogModelView {
    return this.view(this.mergedModel(modelId));
  }

  /** The model as the audit log keeps it; null when the catalog has no entry for the id. */
  auditState(modelId: string): ModelAuditState | null {
    const model = this.merged.find((candidate) => candidate.entry.id === modelId);
    if (!model) return null;
    const version = this.versionOf(model);
    return {
      source: model.source,
      active: model.entry.isActive !== false,
      entry: { ...model.entry },
      ...(version === undefined ? {} : { priceVersion: version }),
    };
  }

  /** Creates or replaces the model's runtime entry (its runtime prices give way to the entry's own). */
  async put(modelId: string, body: unknown, actor: string): Promise<CatalogModelView> {
    const entry = checked(ModelSchema, body, 'model entry');
    if (entry.id !== modelId)
      throw new GatewayError('GW_VALIDATION', `the entry's id "${entry.id}" is not the model of the path`, [
        `at id: must be "${modelId}"`,
      ]);
    const problems: string[] = [];
    checkModels([entry], { providers: this.options.providers, at: () => '' }, (at, problem) =>
      problems.push(`at ${at}: ${problem}`),
    );
    if (problems.length > 0) throw validationError('model entry', problems);
    return this.change(modelId, { entry, pricing: null }, actor);
  }

  /** Sets the model's prices over whichever entry serves it. */
  async setPrices(modelId: string, body: unknown, actor: string): Promise<CatalogModelView> {
    const pricing: Pricing = checked(PricingSchema, body, 'prices');
    const problems: string[] = [];
    checkWholeNanoPrices(pricing, '', (at, problem) => problems.push(`at ${at}: ${problem}`));
    if (problems.length > 0) throw validationError('prices', problems);
    this.mergedModel(modelId);
    return this.change(modelId, { pricing }, actor);
  }

  /** Switches the model on or off, whatever its entry says. */
  async setActive(modelId: string, active: boolean, actor: string): Promise<CatalogModelView> {
    this.mergedModel(modelId);
    return this.change(modelId, { active }, actor);
  }

  /** Deletes every runtime override of the model: gateway.yaml's entry serves again, if it has one. */
  async remove(modelId: string, actor: string): Promise<void> {
    const removed = await this.locked((catalog) => catalog.remove(modelId), actor);
    if (!removed) throw new GatewayError('GW_NOT_FOUND', `model "${modelId}" has no runtime entry, prices or switch`);
    await this.announce();
  }

  /** A page of the model's price versions, newest first. */
  async history(modelId: string, window: PageWindow): Promise<PriceHistoryPage> {
    const { rows, total } = await this.options.repository.history(modelId, window);
    if (total === 0 && !this.merged.some((model) => model.entry.id === modelId))
      throw new GatewayError('GW_NOT_FOUND', `model "${modelId}" not found`);
    const current = this.state.versions.get(modelId)?.id;
    return {
      results: rows.map((row) => ({
        id: row.id,
        modelId: row.modelId,
        // Versions are written checked; one this release cannot read shows as no prices.
        pricing: Value.Check(PricingSchema, row.pricing) ? row.pricing : {},
        source: row.source,
        ...(row.actor === null ? {} : { actor: row.actor }),
        createdAt: row.createdAt.toISOString(),
        current: row.id === current,
      })),
      total,
      ...window,
    };
  }

  private async change(modelId: string, change: RuntimeModelChange, actor: string): Promise<CatalogModelView> {
    await this.locked((catalog) => catalog.write(modelId, change), actor);
    await this.announce();
    return this.get(modelId);
  }

  /**
   * Runs `work` under the catalog's lock, then reads the overrides, adds the versions the merged prices lack,
   * and applies the result, unless a read that took the lock later was applied first.
   */
  private async locked<T>(work: (catalog: LockedRuntimeCatalog) => Promise<T>, actor: string | null): Promise<T> {
    const { result, state, ticket } = await this.options.repository.locked(async (catalog) => {
      const ticket = ++this.readTicket;
      const result = await work(catalog);
      const problems: string[] = [];
      const overrides = (await catalog.rows()).map((row) => overrideFromRow(row, problems));
      for (const problem of problems) this.options.logger.warn(problem);
      const versions = await catalog.syncVersions(
        mergeCatalog(this.fileModels, overrides).flatMap((model) =>
          model.entry.pricing === undefined
            ? []
            : [
                {
                  modelId: model.entry.id,
                  pricing: model.entry.pricing,
                  pricingHash: pricingHash(model.entry.pricing),
                  source: model.pricingSource,
                },
              ],
        ),
        actor,
      );
      return { result, state: { overrides, versions }, ticket };
    });
    if (ticket > this.appliedTicket) {
      this.appliedTicket = ticket;
      this.state = state;
      for (const [modelId, latest] of state.versions) {
        const versions = this.known.get(modelId) ?? new Map<string, string>();
        // The latest read last, so that the oldest of more than a few goes first.
        versions.delete(latest.pricingHash);
        versions.set(latest.pricingHash, latest.id);
        for (const oldest of versions.keys()) {
          if (versions.size <= knownPricesPerModel) break;
          versions.delete(oldest);
        }
        this.known.set(modelId, versions);
      }
      this.applyLocally();
    }
    return result;
  }

  /** The merged catalog in place for new requests, each model with the version of its prices when known. */
  private applyLocally(): void {
    this.merged = mergeCatalog(this.servedFileModels, this.state.overrides);
    const versions = new Map<string, string>();
    for (const model of this.merged) {
      const version = this.versionOf(model);
      if (version !== undefined) versions.set(model.entry.id, version);
    }
    this.options.catalog.replace(
      { models: this.merged.map((model) => model.entry), providers: this.options.providers },
      versions,
    );
  }

  /** The version of the prices the model serves with, when one was read. */
  private versionOf(model: MergedModel): string | undefined {
    if (model.entry.pricing === undefined) return undefined;
    return this.known.get(model.entry.id)?.get(pricingHash(model.entry.pricing));
  }

  private async announce(): Promise<void> {
    await this.options
      .announce()
      .catch((error: Error) =>
        this.options.logger.error(
          { err: error },
          'could not announce a catalog change; other processes read it at their next refresh',
        ),
      );
  }

  private mergedModel(modelId: string): MergedModel {
    const model = this.merged.find((candidate) => candidate.entry.id === modelId);
    if (!model) throw new GatewayError('GW_NOT_FOUND', `model "${modelId}" not found`);
    return model;
  }

  private view(model: MergedModel): CatalogModelView {
    const { override } = model;
    const version = this.versionOf(model);
    return {
      id: model.entry.id,
      source: model.source,
      inFile: model.fileEntry !== undefined,
      overrides: {
        entry: override?.entry !== undefined,
        pricing: override?.pricing !== undefined,
        active: override?.active !== undefined,
      },
      active: model.entry.isActive !== false,
      served: this.options.catalog.find(model.entry.id) !== undefined,
      ...(version === undefined ? {} : { priceVersion: version }),
      entry: model.entry,
    };
  }
}

/** The body as the schema's type, or a 400 naming every problem. */
function checked<S extends TSchema>(schema: S, body: unknown, what: string): Static<S> {
  if (Value.Check(schema, body)) return body;
  throw validationError(what, schemaProblems(schema, body));
}

/**
 * A 400 whose `errors` name each problem once: the first in the message (`errors[0]`, the one line the operator
 * console shows), the others after it.
 */
function validationError(what: string, problems: readonly string[]): GatewayError {
  return new GatewayError('GW_VALIDATION', `invalid ${what}: ${problems[0]}`, problems.slice(1));
}
