import type { Catalog, CatalogModel } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import type { BreakerState } from '../domain/provider-rows.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../domain/upstream-failure.ts';
import type { Protocol } from '../domain/protocols.ts';
import type { AdapterRegistry, EmbeddingAdapter, TextAdapter } from '../providers/provider-adapter.ts';
import type { ProviderBreakers } from './provider-breakers.ts';
import type { RowHealth, RowHealthReading } from './row-health.ts';
import type { UpstreamKeys } from './upstream-keys.ts';

/** A provider row as the operator console lists it: what serves, through what, and how it fares in this process. */
export interface ProviderRowView {
  providerId: string;
  upstreamModel: string;
  protocol: Protocol;
  /** The catalog models served by this row. */
  models: string[];
  breaker: BreakerState;
  health: RowHealthReading & { windowSeconds: number };
  /** What "test this row" sends it: a one-word text completion, a one-word embedding, or nothing (media rows). */
  testable: 'text' | 'embedding' | null;
}

export interface RowTestResult {
  /** `providerId/upstreamModel`, the audit log's name of the row. */
  id: string;
  providerId: string;
  upstreamModel: string;
  kind: 'text' | 'embedding';
  ok: boolean;
  latencyMs: number;
  /** The upstream's status, when it answered an error. */
  status?: number;
  /** Why it failed, in the gateway's words (never the upstream's body, which may echo credentials). */
  error?: string;
  /** A few characters of the answer (text), or the vector's length (embedding). */
  sample?: string;
}

/** The test's own words: small, so it costs the provider next to nothing. */
const testPrompt = 'Reply with the single word: pong';
const testOutputTokens = 8;

/**
 * The operator console's view of the provider rows: each row of the catalog with its breaker and its health
 * from this process's own attempts, and a "test this row" that sends one small real request straight to it,
 * outside the pipeline: nothing is held or billed, and neither the row's breaker nor its figures count it.
 */
export class ProviderRowConsole {
  constructor(
    private readonly sources: {
      catalog: Catalog;
      breakers: ProviderBreakers;
      health: RowHealth;
      adapters: AdapterRegistry;
      providers: ReadonlyMap<string, ProviderConfig>;
      /** The providers' upstream keys: a test is sent with the key a request would be sent with now. */
      keys?: UpstreamKeys;
    },
  ) {}

  list(): ProviderRowView[] {
    const breakers = new Map(
      this.sources.breakers.states().map((row) => [`${row.providerId}\n${row.upstreamModel}`, row.state]),
    );
    const rows = new Map<string, ProviderRowView>();
    for (const model of this.sources.catalog.list()) {
      for (const row of model.rows) {
        const key = `${row.providerId}\n${row.upstreamModel}`;
        const known = rows.get(key);
        if (known) {
          known.models.push(model.modelId);
          known.testable ??= this.testKind(model, row.protocol);
          continue;
        }
        rows.set(key, {
          providerId: row.providerId,
          upstreamModel: row.upstreamModel,
          protocol: row.protocol,
          models: [model.modelId],
          breaker: breakers.get(key) ?? 'closed',
          health: { ...this.sources.health.reading(row), windowSeconds: this.sources.health.windowMs / 1000 },
          testable: this.testKind(model, row.protocol),
        });
      }
    }
    return [...rows.values()].sort(
      (a, b) => a.providerId.localeCompare(b.providerId) || a.upstreamModel.localeCompare(b.upstreamModel),
    );
  }

  /** Sends one small request to the row and answers how it went; 404 for a row the catalog does not have. */
  async test(providerId: string, upstreamModel: string): Promise<RowTestResult> {
    const row = this.list().find((view) => view.providerId === providerId && view.upstreamModel === upstreamModel);
    if (!row) throw new GatewayError('GW_NOT_FOUND', `provider row "${providerId}/${upstreamModel}" not found`);
    const target =
      this.sources.keys?.choose({ providerId, upstreamModel }, this.sources.breakers)?.target ??
      this.sources.providers.get(providerId);
    const adapter = this.sources.adapters.get(row.protocol);
    if (!row.testable || !target || !adapter)
      throw new GatewayError(
        'GW_VALIDATION',
        `provider row "${providerId}/${upstreamModel}" serves media only: a test would be a real media generation; none is sent`,
        ['upstreamModel'],
      );
    const kind = row.testable;
    const base = { id: `${providerId}/${upstreamModel}`, providerId, upstreamModel, kind };
    const startedAt = performance.now();
    try {
      const sample =
        kind === 'text'
          ? await this.sendText(adapter.text, target, upstreamModel)
          : await this.sendEmbedding(adapter.embeddings, target, upstreamModel);
      return { ...base, ok: true, latencyMs: Math.round(performance.now() - startedAt), sample };
    } catch (error) {
      return {
        ...base,
        ok: false,
        latencyMs: Math.round(performance.now() - startedAt),
        ...(error instanceof UpstreamHttpError ? { status: error.status } : {}),
        error: describeFailure(error),
      };
    }
  }

  private testKind(model: CatalogModel, protocol: Protocol): 'text' | 'embedding' | null {
    const adapter = this.sources.adapters.get(protocol);
    if (model.outputModalities.includes('text') && adapter?.text) return 'text';
    if (model.outputModalities.includes('embedding') && adapter?.embeddings) return 'embedding';
    return null;
  }

  private async sendText(
    adapter: TextAdapter | undefined,
    target: ProviderConfig,
    upstreamModel: string,
  ): Promise<string> {
    if (!adapter) throw new Error('no text adapter');
    let text = '';
    for await (const event of adapter.streamChat(
      { upstreamModel, messages: [{ role: 'user', content: testPrompt }], maxTokens: testOutputTokens },
      { target },
    ))
      if (event.type === 'text-delta' && text.length < 80) text += event.text;
    return text.slice(0, 80);
  }

  private async sendEmbedding(
    adapter: EmbeddingAdapter | undefined,
    target: ProviderConfig,
    upstreamModel: string,
  ): Promise<string> {
    if (!adapter) throw new Error('no embeddings adapter');
    const result = await adapter.embed(
      { upstreamModel, inputs: [{ parts: [{ type: 'text', text: 'pong' }] }] },
      { target },
    );
    return `${result.vectors[0]?.length ?? 0} dimensions`;
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof UpstreamHttpError) return `upstream answered ${error.status}`;
  if (error instanceof UpstreamUnreachableError)
    return error.reason === 'timeout'
      ? 'upstream timed out'
      : error.reason === 'protocol'
        ? 'upstream broke its protocol'
        : 'upstream unreachable';
  if (error instanceof GatewayError) return error.code;
  return 'failed';
}
