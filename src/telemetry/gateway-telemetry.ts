import type { Logger } from 'pino';
import { Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import type { RecordedGeneration } from '../domain/generation-route.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { BreakerState, DispatchEvents, RowRef } from '../domain/provider-rows.ts';
import { CounterFamily, HistogramFamily, type CounterCell, type HistogramCell } from './metric-cells.ts';
import { generationFields, writeGenerationLine } from './request-line.ts';
import { surfaceOf } from './surfaces.ts';

/** Figures read when `/metrics` is scraped (the database ones cost a query, so they are not kept up to date). */
export interface ScrapedFigures {
  /** This process: reservations not yet settled, and its credit leases. */
  ledger(): { reservations: number; leases: number; leasedNanos: bigint };
  /** The database: hold rows by kind (a request's, a lease, a media job's) and their sums. */
  holds(): Promise<Array<{ kind: string; count: number; nanos: bigint }>>;
  /** Media jobs queued and under way, by state. */
  jobs(): Promise<Record<string, number>>;
  breakers(): Array<RowRef & { state: BreakerState }>;
}

const breakerValues: Record<BreakerState, number> = { closed: 0, open: 1, 'half-open': 2 };

/**
 * The kinds of hold the database's figures name (storage's `holdsByKind`): each has a series in every scrape that
 * read them, 0 when the database holds none of the kind, so an alert on `== 0` or on its absence finds it.
 */
const holdKinds = ['request', 'lease', 'media-job'] as const;

/** The holds read in a scrape, with each known kind the database has none of at 0. */
function holdsOfEveryKind(
  holds: Awaited<ReturnType<ScrapedFigures['holds']>>,
): Awaited<ReturnType<ScrapedFigures['holds']>> {
  const missing = holdKinds.filter((kind) => !holds.some((hold) => hold.kind === kind));
  return [...holds, ...missing.map((kind) => ({ kind, count: 0, nanos: 0n }))];
}

/** The figures a scrape reads from the database: each undefined when it could not be read in time. */
interface DatabaseFigures {
  holds: Awaited<ReturnType<ScrapedFigures['holds']>> | undefined;
  jobs: Awaited<ReturnType<ScrapedFigures['jobs']>> | undefined;
}

/** How long a scrape waits for each database figure (Prometheus gives a whole scrape 10 s by default). */
const databaseFigureMs = 2_000;

/** A figure read from the database, or undefined when the read fails or takes longer than `databaseFigureMs`. */
async function withinScrape<T>(read: () => Promise<T>): Promise<T | undefined> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(resolve, databaseFigureMs, undefined);
  });
  try {
    return await Promise.race([read(), late]);
  } catch {
    return undefined;
  } finally {
    clearTimeout(timer);
  }
}
const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The operator's windows into the gateway: Prometheus metrics (requests, upstream latency, tokens and USD
 * by model, holds, leases, fallbacks, breakers, jobs) and the structured log lines of generations,
 * fallbacks and breaker changes. One instance per process; every figure is this process's, except those
 * read from the database at scrape time.
 */
export class GatewayTelemetry implements DispatchEvents {
  readonly registry = new Registry();
  private readonly requests = new CounterFamily({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by surface, route template, method and status',
    labelNames: ['surface', 'route', 'method', 'status'],
  });
  private readonly requestSeconds = new HistogramFamily({
    name: 'gateway_http_request_duration_seconds',
    help: 'Time to answer a request, to its last byte',
    labelNames: ['surface', 'route', 'method'],
    bounds: secondsBuckets,
  });
  private readonly firstByteSeconds = new HistogramFamily({
    name: 'gateway_upstream_first_byte_seconds',
    help: 'Time from a generation request to its upstream first byte, by provider',
    labelNames: ['provider'],
    bounds: secondsBuckets,
  });
  private readonly upstreamSeconds = new HistogramFamily({
    name: 'gateway_upstream_duration_seconds',
    help: 'Time of a whole generation, by the provider that served it',
    labelNames: ['provider'],
    bounds: secondsBuckets,
  });
  private readonly generations = new CounterFamily({
    name: 'gateway_generations_total',
    help: 'Generations recorded, by model, modality and status',
    labelNames: ['model', 'modality', 'status'],
  });
  private readonly tokens = new CounterFamily({
    name: 'gateway_generation_tokens_total',
    help: 'Tokens of recorded generations, by model and direction',
    labelNames: ['model', 'direction'],
  });
  private readonly usd = new CounterFamily({
    name: 'gateway_generation_usd_total',
    help: 'USD charged for recorded generations, by model and modality',
    labelNames: ['model', 'modality'],
  });
  private readonly fallbacks = new CounterFamily({
    name: 'gateway_fallbacks_total',
    help: 'Requests that went on from one provider row to the next',
    labelNames: ['model', 'from', 'to', 'reason'],
  });
  private readonly retries = new CounterFamily({
    name: 'gateway_upstream_retries_total',
    help: 'Requests tried again on a provider after its retry-after',
    labelNames: ['model', 'provider'],
  });
  private readonly families = [
    this.requests,
    this.requestSeconds,
    this.firstByteSeconds,
    this.upstreamSeconds,
    this.generations,
    this.tokens,
    this.usd,
    this.fallbacks,
    this.retries,
  ];
  private readonly meters = new Map<string, RouteMeter>();
  private figures: ScrapedFigures | undefined;

  constructor(private readonly logger: Logger) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
    const figures = () => this.figures;
    // The database's gauges are collected at once in a scrape (prom-client gathers every metric together): one
    // read of each serves them all.
    let databaseInFlight: Promise<DatabaseFigures> | undefined;
    const databaseOfScrape = () =>
      (databaseInFlight ??= this.readDatabaseFigures().finally(() => {
        databaseInFlight = undefined;
      }));
    new Gauge({
      name: 'gateway_database_figures_read',
      help: 'Whether this scrape read the database figures (holds, media jobs): 0 when the database did not answer within 2 s, and they are left out',
      registers,
      async collect() {
        const { holds, jobs } = await databaseOfScrape();
        this.set(holds !== undefined && jobs !== undefined ? 1 : 0);
      },
    });
    new Gauge({
      name: 'gateway_reservations_outstanding',
      help: 'Reservations of this process not yet settled or released',
      registers,
      collect() {
        const ledger = figures()?.ledger();
        if (ledger) this.set(ledger.reservations);
      },
    });
    new Gauge({
      name: 'gateway_credit_leases',
      help: 'Credit leases this process holds',
      registers,
      collect() {
        const ledger = figures()?.ledger();
        if (ledger) this.set(ledger.leases);
      },
    });
    new Gauge({
      name: 'gateway_credit_leased_usd',
      help: 'USD this process holds in credit leases',
      registers,
      collect() {
        const ledger = figures()?.ledger();
        if (ledger) this.set(nanosToUsd(ledger.leasedNanos));
      },
    });
    new Gauge({
      name: 'gateway_holds',
      help: 'Hold rows in the database, by kind (request, lease, media-job)',
      labelNames: ['kind'],
      registers,
      async collect() {
        const { holds } = await databaseOfScrape();
        this.reset();
        if (holds) for (const hold of holdsOfEveryKind(holds)) this.set({ kind: hold.kind }, hold.count);
      },
    });
    new Gauge({
      name: 'gateway_holds_usd',
      help: 'USD held in the database, by kind of hold',
      labelNames: ['kind'],
      registers,
      async collect() {
        const { holds } = await databaseOfScrape();
        this.reset();
        if (holds) for (const hold of holdsOfEveryKind(holds)) this.set({ kind: hold.kind }, nanosToUsd(hold.nanos));
      },
    });
    new Gauge({
      name: 'gateway_media_jobs',
      help: 'Media jobs of every process queued and under way (the queue depth), by state',
      labelNames: ['state'],
      registers,
      async collect() {
        const { jobs } = await databaseOfScrape();
        this.reset();
        for (const [state, count] of Object.entries(jobs ?? {})) this.set({ state }, count);
      },
    });
    new Gauge({
      name: 'gateway_provider_breaker_state',
      help: 'Breaker of each provider row this process has called: 0 closed, 1 open, 2 half-open (one probe under way)',
      labelNames: ['provider', 'upstream_model'],
      registers,
      collect() {
        this.reset();
        for (const row of figures()?.breakers() ?? [])
          this.set({ provider: row.providerId, upstream_model: row.upstreamModel }, breakerValues[row.state]);
      },
    });
  }

  /**
   * The database's figures for a scrape, each left out when the database does not answer it in time: a scrape
   * during an outage still serves this process's own figures, within Prometheus's scrape time-out.
   */
  private async readDatabaseFigures(): Promise<DatabaseFigures> {
    const source = this.figures;
    if (!source) return { holds: [], jobs: {} };
    const [holds, jobs] = await Promise.all([withinScrape(() => source.holds()), withinScrape(() => source.jobs())]);
    if (holds === undefined || jobs === undefined)
      this.logger.warn('the database did not answer a metrics scrape in time: its figures are left out');
    return { holds, jobs };
  }

  /** Where the scraped figures come from, once the core that holds them is up. */
  observe(figures: ScrapedFigures): void {
    this.figures = figures;
  }

  /** The request metrics of a route template (one for every unmatched path, so a scan of random URLs cannot grow them). */
  meterOf(route: string): RouteMeter {
    let meter = this.meters.get(route);
    if (!meter) {
      meter = new RouteMeter(route, { requests: this.requests, requestSeconds: this.requestSeconds });
      this.meters.set(route, meter);
    }
    return meter;
  }

  /**
   * A usage record's figures in the metrics. Its fields go on the line of the request it served (which waits for
   * its hold), or, for a record no request waits for (a media job's), through `generationRecorded`.
   */
  generationCounted(generation: RecordedGeneration): void {
    const { model, modality } = generation;
    this.generations.cell({ model, modality, status: generation.status }).inc();
    if (generation.chargedNanos > 0n) this.usd.cell({ model, modality }).inc(nanosToUsd(generation.chargedNanos));
    const tokens = tokensOf(generation.usage);
    if (tokens.input > 0) this.tokens.cell({ model, direction: 'input' }).inc(tokens.input);
    if (tokens.output > 0) this.tokens.cell({ model, direction: 'output' }).inc(tokens.output);
    const route = generation.route;
    if (route && generation.status !== 'failed') {
      if (route.firstByteMs !== undefined)
        this.firstByteSeconds.cell({ provider: route.providerId }).observe(route.firstByteMs / 1000);
      if (generation.durationMs !== null)
        this.upstreamSeconds.cell({ provider: route.providerId }).observe(generation.durationMs / 1000);
    }
  }

  /** A usage record no request's line carries: its figures in the metrics, and its fields on a line of its own. */
  generationRecorded(generation: RecordedGeneration): void {
    this.generationCounted(generation);
    if (this.logger.isLevelEnabled('info')) writeGenerationLine(this.logger, generationFields(generation));
  }

  fallback(event: { modelId: string; from: RowRef; to: RowRef; reason: string }): void {
    this.fallbacks
      .cell({ model: event.modelId, from: event.from.providerId, to: event.to.providerId, reason: event.reason })
      .inc();
    // Rows are named by their ids, never logged whole: the object a caller passes may carry the provider's credentials.
    const from = rowNamed(event.from);
    const to = rowNamed(event.to);
    this.logger.warn(
      { event: 'fallback', model: event.modelId, from, to, reason: event.reason },
      'provider row failed or skipped: falling back to the next',
    );
  }

  retry(event: { modelId: string; row: RowRef; afterMs: number; reason: string }): void {
    this.retries.cell({ model: event.modelId, provider: event.row.providerId }).inc();
    const { providerId, upstreamModel } = event.row;
    this.logger.warn(
      { event: 'retry', model: event.modelId, providerId, upstreamModel, afterMs: event.afterMs, reason: event.reason },
      'trying the provider again after its retry-after',
    );
  }

  /** A breaker of a row and one of its provider's keys (by id, never the key) changed state. */
  breakerChanged(row: RowRef & { keyId?: string }, state: BreakerState): void {
    const level = state === 'closed' ? 'info' : 'warn';
    this.logger[level](
      { event: 'breaker', providerId: row.providerId, upstreamModel: row.upstreamModel, keyId: row.keyId, state },
      `provider row breaker ${state}`,
    );
  }

  /** The registry's metrics (process figures, scrape-time gauges), then the request path's. */
  async metricsText(): Promise<string> {
    return `${await this.registry.metrics()}\n${this.families.map((family) => family.text()).join('\n\n')}\n`;
  }
}

/**
 * The request metrics of one route template: its cells by method and status, found with two lookups on the
 * method's string and the status number, not a label set checked and hashed.
 */
export class RouteMeter {
  private readonly counted = new Map<string, Map<number, CounterCell>>();
  private readonly timed = new Map<string, HistogramCell>();

  private readonly surface: string;
  private readonly requests: CounterFamily<'surface' | 'route' | 'method' | 'status'>;
  private readonly requestSeconds: HistogramFamily<'surface' | 'route' | 'method'>;

  constructor(
    readonly route: string,
    families: {
      requests: CounterFamily<'surface' | 'route' | 'method' | 'status'>;
      requestSeconds: HistogramFamily<'surface' | 'route' | 'method'>;
    },
  ) {
    this.surface = surfaceOf(route);
    this.requests = families.requests;
    this.requestSeconds = families.requestSeconds;
  }

  answered(method: string, status: number, seconds: number): void {
    let byStatus = this.counted.get(method);
    if (!byStatus) {
      byStatus = new Map();
      this.counted.set(method, byStatus);
    }
    let counter = byStatus.get(status);
    if (!counter) {
      counter = this.requests.cell({ surface: this.surface, route: this.route, method, status: String(status) });
      byStatus.set(status, counter);
    }
    counter.inc();
    let histogram = this.timed.get(method);
    if (!histogram) {
      histogram = this.requestSeconds.cell({ surface: this.surface, route: this.route, method });
      this.timed.set(method, histogram);
    }
    histogram.observe(seconds);
  }
}

/** A provider row as a log line names it: its provider and upstream model, and nothing else of the object. */
function rowNamed(row: RowRef): RowRef {
  return { providerId: row.providerId, upstreamModel: row.upstreamModel };
}

/** Input and output tokens of a record's usage, in whichever modality's names it has them. */
function tokensOf(usage: unknown): { input: number; output: number } {
  if (usage === null || typeof usage !== 'object') return { input: 0, output: 0 };
  const record = usage as Record<string, unknown>;
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  return {
    input: count(record.promptTokens ?? record.inputTokens),
    output: count(record.completionTokens ?? record.outputTokens),
  };
}
