import type { CreditLedger, GenerationStatus } from '../billing/credit-ledger.ts';
import { requirePricing } from '../billing/pricing.ts';
import { countTextTokens, defaultMaxOutputTokens, estimatePromptTokens } from '../billing/token-estimate.ts';
import { gateParameters } from '../catalog/capability-gate.ts';
import type { Catalog, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import type { ChatMessage, ChatRequest, ChatStreamEvent, TokenUsage } from '../domain/chat.ts';
import { GatewayError } from '../domain/errors.ts';
import type { AdapterRegistry, TextAdapter } from '../providers/provider-adapter.ts';
import type { WorkTracker } from './work-tracker.ts';

export interface TextGenerationInput {
  modelId: string;
  messages: readonly ChatMessage[];
  maxTokens?: number;
  temperature?: number;
  topP?: number;
  stop?: readonly string[];
  seed?: number;
  /** Every model-dependent parameter the client sent, by the native field name, for the capability gate. */
  gatedParameters: Readonly<Record<string, unknown>>;
  /** What the usage record keeps of the request (no message content). */
  recordedRequest: Record<string, unknown>;
}

export interface Caller {
  accountId: string;
  apiKeyId: string | null;
}

export interface TextRun {
  /** Canonical events; iterating to the end (or breaking out) always settles the hold exactly once. */
  events: AsyncIterable<ChatStreamEvent>;
  /** Parameters dropped because the model does not take them (`strictParams: false`). */
  droppedParameters: string[];
}

interface Dependencies {
  work: WorkTracker;
  catalog: Catalog;
  ledger: CreditLedger;
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
}

/** The pipeline for text: resolve -> gate -> price + hold -> dispatch -> meter -> settle. */
export class TextGeneration {
  constructor(private readonly dependencies: Dependencies) {}

  async start(caller: Caller, input: TextGenerationInput): Promise<TextRun> {
    const { catalog, ledger } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    // Refused before anything is held or sent when the operator gave the model no price.
    requirePricing(model);
    const route = this.textRoute(model.modelId, model.rows);
    const { dropped } = gateParameters({ modelId: model.modelId, capabilities: route.row.capabilities, scope: 'text', optional: input.gatedParameters });
    const promptTokens = estimatePromptTokens(input.messages);
    const holdAmount = ledger.tokenCost(model, { inputTokens: promptTokens, outputTokens: input.maxTokens ?? defaultMaxOutputTokens });
    const hold = await ledger.hold({ accountId: caller.accountId, apiKeyId: caller.apiKeyId, amountNanos: holdAmount, modelId: model.modelId });
    const request: ChatRequest = {
      upstreamModel: route.row.upstreamModel,
      messages: input.messages,
      maxTokens: input.maxTokens,
      temperature: dropped.includes('temperature') ? undefined : input.temperature,
      topP: dropped.includes('topP') ? undefined : input.topP,
      stop: dropped.includes('stop') ? undefined : input.stop,
      seed: dropped.includes('seed') ? undefined : input.seed,
    };
    const events = meteredStream(route.adapter.streamChat(request, { target: route.target }), {
      endWork: this.dependencies.work.begin(),
      countPrompt: () => input.messages.reduce((sum, message) => sum + countTextTokens(message.content), 0),
      settle: (status, usage, counted) =>
        ledger.settle(hold, {
          costNanos: usage ? ledger.tokenCost(model, usage) : 0n,
          modality: 'text',
          status,
          request: input.recordedRequest,
          usage: usage && {
            promptTokens: usage.inputTokens,
            completionTokens: usage.outputTokens,
            totalTokens: usage.inputTokens + usage.outputTokens,
            ...(counted ? { countedByGateway: true } : {}),
          },
        }),
    });
    // Pull the first event now: a failure before the first byte becomes an HTTP error, not a broken stream.
    const iterator = events[Symbol.asyncIterator]();
    const first = await iterator.next();
    return { events: prepend(first, iterator), droppedParameters: dropped };
  }

  private textRoute(modelId: string, rows: readonly ProviderRow[]): { row: ProviderRow; adapter: TextAdapter; target: ProviderConfig } {
    for (const row of rows) {
      const adapter = this.dependencies.adapters.get(row.protocol)?.text;
      const target = this.dependencies.providers.get(row.providerId);
      if (adapter && target) return { row, adapter, target };
    }
    throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${modelId}" does not generate text`);
  }
}

interface MeterHooks {
  endWork: () => void;
  countPrompt: () => number;
  /** `usage` undefined: nothing was reported or produced, so nothing is charged. */
  settle: (status: GenerationStatus, usage: TokenUsage | undefined, counted: boolean) => Promise<unknown>;
}

/**
 * Relays the upstream's events while metering them. The upstream is always read to its end, even when the
 * consumer stops early (a client that went away is billed like one that stayed), and the hold is settled
 * exactly once: at full usage when the stream finished (counting tokens ourselves when the provider reported
 * none), at only what the provider reported when it failed.
 */
async function* meteredStream(upstream: AsyncIterable<ChatStreamEvent>, hooks: MeterHooks): AsyncGenerator<ChatStreamEvent> {
  const iterator = upstream[Symbol.asyncIterator]();
  let output = '';
  let reported: TokenUsage | undefined;
  let finished = false;
  let consumerLeft = true;
  let failed = false;
  const observe = (event: ChatStreamEvent) => {
    if (event.type === 'text-delta') output += event.text;
    else {
      finished = true;
      reported = event.usage;
    }
  };
  try {
    for (;;) {
      const next = await iterator.next();
      if (next.done) break;
      observe(next.value);
      yield next.value;
    }
    consumerLeft = false;
  } catch (error) {
    failed = true;
    consumerLeft = false;
    throw error;
  } finally {
    if (consumerLeft) {
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) observe(next.value);
      } catch {
        failed = true;
      }
    }
    try {
      if (failed || !finished) {
        await hooks.settle('failed', reported, false);
      } else {
        const usage = reported ?? { inputTokens: hooks.countPrompt(), outputTokens: countTextTokens(output) };
        await hooks.settle(consumerLeft ? 'aborted' : 'succeeded', usage, reported === undefined);
      }
    } finally {
      hooks.endWork();
    }
  }
}

/** Yields an already pulled first result, then the rest of the iterator; breaking out returns the iterator. */
async function* prepend<T>(first: IteratorResult<T>, iterator: AsyncIterator<T>): AsyncGenerator<T> {
  try {
    if (first.done) return;
    yield first.value;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  } finally {
    await iterator.return?.();
  }
}
