import type { Logger } from 'pino';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { RecordedGeneration } from '../domain/generation-route.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { BreakerState, RowRef } from '../gateway/provider-breakers.ts';
import type { DispatchEvents } from '../gateway/upstream-dispatch.ts';
import { surfaceOf } from './surfaces.ts';

/** Figures read when `/metrics` is scraped (the database ones cost a query, so they are not kept up to date). */
export interface ScrapedFigures {
  /** This process: reservations not yet settled, and its credit leases. */
  ledger(): { reservations: number; leases: number; leasedNanos: bigint };
  /** The database: hold rows by kind (a request's, a lease, a media job's) and their sums. */
  holds(): Promise<Array<{ kind: string; count: number; nanos: bigint }>>;
  /** Media jobs by state. */
  jobs(): Promise<Record<string, number>>;
  breakers(): Array<RowRef & { state: BreakerState }>;
}

const breakerValues: Record<BreakerState, number> = { closed: 0, open: 1, 'half-open': 2 };
const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300];

/**
 * The operator's windows into the gateway: Prometheus metrics (requests, upstream latency, tokens and USD
 * by model, holds, leases, fallbacks, breakers, jobs) and the structured log lines of generations,
 * fallbacks and breaker changes. One instance per process; every figure is this process's, except those
 * read from the database at scrape time.
 */
export class GatewayTelemetry implements DispatchEvents {
  readonly registry = new Registry();
  private readonly requests: Counter<'surface' | 'route' | 'method' | 'status'>;
  private readonly requestSeconds: Histogram<'surface' | 'route' | 'method'>;
  private readonly firstByteSeconds: Histogram<'provider'>;
  private readonly upstreamSeconds: Histogram<'provider'>;
  private readonly generations: Counter<'model' | 'modality' | 'status'>;
  private readonly tokens: Counter<'model' | 'direction'>;
  private readonly usd: Counter<'model' | 'modality'>;
  private readonly fallbacks: Counter<'model' | 'from' | 'to' | 'reason'>;
  private readonly retries: Counter<'model' | 'provider'>;
  private figures: ScrapedFigures | undefined;
  private readonly requestLabels = new Map<string, { counted: Record<'surface' | 'route' | 'method' | 'status', string>; timed: Record<'surface' | 'route' | 'method', string> }>();

  constructor(private readonly logger: Logger) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'gateway_' });
    this.requests = new Counter({ name: 'gateway_http_requests_total', help: 'HTTP requests answered, by surface, route template, method and status', labelNames: ['surface', 'route', 'method', 'status'], registers });
    this.requestSeconds = new Histogram({ name: 'gateway_http_request_duration_seconds', help: 'Time to answer a request, to its last byte', labelNames: ['surface', 'route', 'method'], buckets: secondsBuckets, registers });
    this.firstByteSeconds = new Histogram({ name: 'gateway_upstream_first_byte_seconds', help: 'Time from a generation request to its upstream first byte, by provider', labelNames: ['provider'], buckets: secondsBuckets, registers });
    this.upstreamSeconds = new Histogram({ name: 'gateway_upstream_duration_seconds', help: 'Time of a whole generation, by the provider that served it', labelNames: ['provider'], buckets: secondsBuckets, registers });
    this.generations = new Counter({ name: 'gateway_generations_total', help: 'Generations recorded, by model, modality and status', labelNames: ['model', 'modality', 'status'], registers });
    this.tokens = new Counter({ name: 'gateway_generation_tokens_total', help: 'Tokens of recorded generations, by model and direction', labelNames: ['model', 'direction'], registers });
    this.usd = new Counter({ name: 'gateway_generation_usd_total', help: 'USD charged for recorded generations, by model and modality', labelNames: ['model', 'modality'], registers });
    this.fallbacks = new Counter({ name: 'gateway_fallbacks_total', help: 'Requests that went on from one provider row to the next', labelNames: ['model', 'from', 'to', 'reason'], registers });
    this.retries = new Counter({ name: 'gateway_upstream_retries_total', help: "Requests tried again on a provider after its retry-after", labelNames: ['model', 'provider'], registers });
    const figures = () => this.figures;
    // Both hold gauges are collected at once in a scrape (prom-client gathers every metric together): one query serves them.
    let holdsInFlight: Promise<Array<{ kind: string; count: number; nanos: bigint }>> | undefined;
    const holdsOfScrape = () =>
      (holdsInFlight ??= Promise.resolve(figures()?.holds() ?? []).finally(() => {
        holdsInFlight = undefined;
      }));
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
        const holds = await holdsOfScrape();
        this.reset();
        for (const hold of holds) this.set({ kind: hold.kind }, hold.count);
      },
    });
    new Gauge({
      name: 'gateway_holds_usd',
      help: 'USD held in the database, by kind of hold',
      labelNames: ['kind'],
      registers,
      async collect() {
        const holds = await holdsOfScrape();
        this.reset();
        for (const hold of holds) this.set({ kind: hold.kind }, nanosToUsd(hold.nanos));
      },
    });
    new Gauge({
      name: 'gateway_media_jobs',
      help: 'Media jobs in the database, by state (the queue depth: queued and processing)',
      labelNames: ['state'],
      registers,
      async collect() {
        const jobs = await figures()?.jobs();
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
        for (const row of figures()?.breakers() ?? []) this.set({ provider: row.providerId, upstream_model: row.upstreamModel }, breakerValues[row.state]);
      },
    });
  }

  /** Where the scraped figures come from, once the core that holds them is up. */
  observe(figures: ScrapedFigures): void {
    this.figures = figures;
  }

  /**
   * One answered request. The label sets are made once per route template, method and status (a bounded set:
   * unmatched paths share one route label), so an answer costs two map lookups, not two label objects and a
   * surface match.
   */
  request(route: string, method: string, status: number, seconds: number): void {
    const key = `${route} ${method} ${status}`;
    let labels = this.requestLabels.get(key);
    if (!labels) {
      const timed = { surface: surfaceOf(route), route, method };
      labels = { counted: { ...timed, status: String(status) }, timed };
      this.requestLabels.set(key, labels);
    }
    this.requests.inc(labels.counted);
    this.requestSeconds.observe(labels.timed, seconds);
  }

  /** One line per generation, with its route, and its figures in the metrics. */
  generationRecorded(generation: RecordedGeneration): void {
    const usd = nanosToUsd(generation.chargedNanos);
    this.generations.inc({ model: generation.model, modality: generation.modality, status: generation.status });
    if (usd > 0) this.usd.inc({ model: generation.model, modality: generation.modality }, usd);
    const tokens = tokensOf(generation.usage);
    if (tokens.input > 0) this.tokens.inc({ model: generation.model, direction: 'input' }, tokens.input);
    if (tokens.output > 0) this.tokens.inc({ model: generation.model, direction: 'output' }, tokens.output);
    const route = generation.route;
    if (route && generation.status !== 'failed') {
      if (route.firstByteMs !== undefined) this.firstByteSeconds.observe({ provider: route.providerId }, route.firstByteMs / 1000);
      if (generation.durationMs !== null) this.upstreamSeconds.observe({ provider: route.providerId }, generation.durationMs / 1000);
    }
    if (!this.logger.isLevelEnabled('info')) return;
    this.logger.info(
      {
        event: 'generation',
        generationId: generation.generationId,
        accountId: generation.accountId,
        apiKeyId: generation.apiKeyId,
        model: generation.model,
        modality: generation.modality,
        status: generation.status,
        usdCost: usd,
        durationMs: generation.durationMs,
        ...(route
          ? { providerId: route.providerId, upstreamModel: route.upstreamModel, fallbacks: route.fallbacks, requestId: route.requestId, firstByteMs: route.firstByteMs }
          : {}),
      },
      'generation recorded',
    );
  }

  fallback(event: { modelId: string; from: RowRef; to: RowRef; reason: string }): void {
    this.fallbacks.inc({ model: event.modelId, from: event.from.providerId, to: event.to.providerId, reason: event.reason });
    this.logger.warn({ event: 'fallback', model: event.modelId, from: event.from, to: event.to, reason: event.reason }, 'provider row failed or skipped: falling back to the next');
  }

  retry(event: { modelId: string; row: RowRef; afterMs: number; reason: string }): void {
    this.retries.inc({ model: event.modelId, provider: event.row.providerId });
    this.logger.warn({ event: 'retry', model: event.modelId, row: event.row, afterMs: event.afterMs, reason: event.reason }, "trying the provider again after its retry-after");
  }

  breakerChanged(row: RowRef, state: BreakerState): void {
    const level = state === 'closed' ? 'info' : 'warn';
    this.logger[level]({ event: 'breaker', providerId: row.providerId, upstreamModel: row.upstreamModel, state }, `provider row breaker ${state}`);
  }

  async metricsText(): Promise<string> {
    return this.registry.metrics();
  }
}

/** Input and output tokens of a record's usage, in whichever modality's names it has them. */
function tokensOf(usage: unknown): { input: number; output: number } {
  if (usage === null || typeof usage !== 'object') return { input: 0, output: 0 };
  const record = usage as Record<string, unknown>;
  const count = (value: unknown) => (typeof value === 'number' && Number.isFinite(value) && value > 0 ? value : 0);
  return { input: count(record.promptTokens ?? record.inputTokens), output: count(record.completionTokens ?? record.outputTokens) };
}
