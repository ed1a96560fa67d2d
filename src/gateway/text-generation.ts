import type { CreditLedger, GenerationStatus } from '../billing/credit-ledger.ts';
import { requirePricing } from '../billing/pricing.ts';
import { countTextTokens, defaultMaxOutputTokens, estimatePromptTokens } from '../billing/token-estimate.ts';
import { gateParameters } from '../catalog/capability-gate.ts';
import type { Catalog, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import type { ChatMessage, ChatRequest, ChatStreamEvent, TokenUsage } from '../domain/chat.ts';
import { GatewayError } from '../domain/errors.ts';
import type { Protocol } from '../domain/protocols.ts';
import type { AdapterRegistry, RelayOperation, RelayReading, TextAdapter } from '../providers/provider-adapter.ts';
import { metered, startIteration } from './metered.ts';
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
  /**
   * Features of the request the canonical model cannot carry yet (for example image parts): fine when the
   * request is relayed to an upstream of its own protocol, a 400 naming the model when it must be translated.
   */
  untranslatable?: readonly string[];
  /**
   * The request in the surface's own wire shape. When the winning provider speaks that protocol it is
   * forwarded as given (`prepare` may rewrite fields such as the model id) and the answer relayed as it comes.
   */
  relay?: {
    protocol: Protocol;
    operation: RelayOperation;
    streaming: boolean;
    /** Builds the upstream body; parameters named in `dropped` (native field names) must be left out. */
    prepare: (upstreamModel: string, dropped: readonly string[]) => Record<string, unknown>;
    /** Protocol headers of the client's request that the protocol forwards (version, feature flags). */
    headers?: Readonly<Record<string, string>>;
  };
}

export interface Caller {
  accountId: string;
  apiKeyId: string | null;
}

interface RunBase {
  /** Parameters dropped because the model does not take them (`strictParams: false`). */
  droppedParameters: string[];
}

export type EventsRun = RunBase & { kind: 'events'; events: AsyncIterable<ChatStreamEvent> };
export type RelayRun = RunBase & { kind: 'relay'; status: number; contentType: string | undefined; body: AsyncIterable<Uint8Array>; reading: () => RelayReading };

/** Iterating `events` or `body` to the end (or breaking out) always settles the hold exactly once. */
export type TextRun = EventsRun | RelayRun;

interface Dependencies {
  work: WorkTracker;
  catalog: Catalog;
  ledger: CreditLedger;
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
}

interface Route {
  row: ProviderRow;
  adapter: TextAdapter;
  target: ProviderConfig;
}

/** The pipeline for text: resolve -> gate -> price + hold -> dispatch -> meter -> settle. */
export class TextGeneration {
  constructor(private readonly dependencies: Dependencies) {}

  start(caller: Caller, input: TextGenerationInput & { relay?: undefined }): Promise<EventsRun>;
  start(caller: Caller, input: TextGenerationInput): Promise<TextRun>;
  async start(caller: Caller, input: TextGenerationInput): Promise<TextRun> {
    const { catalog, ledger } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    // Refused before anything is held or sent when the operator gave the model no price.
    requirePricing(model);
    const route = this.textRoute(model.modelId, model.rows);
    const { dropped } = gateParameters({ modelId: model.modelId, capabilities: route.row.capabilities, scope: 'text', optional: input.gatedParameters });
    const relay = input.relay;
    const relayed = relay !== undefined && relay.protocol === route.row.protocol && route.adapter.relay !== undefined && route.adapter.relayMeter !== undefined;
    const [blocker] = relayed ? [] : (input.untranslatable ?? []);
    if (blocker) throw new GatewayError('GW_VALIDATION', `model "${model.modelId}" cannot take ${blocker} through this surface`);
    const holdAmount = ledger.tokenCost(model, { inputTokens: estimatePromptTokens(input.messages), outputTokens: input.maxTokens ?? defaultMaxOutputTokens });
    const hold = await ledger.hold({ accountId: caller.accountId, apiKeyId: caller.apiKeyId, amountNanos: holdAmount, modelId: model.modelId });
    const endWork = this.dependencies.work.begin();
    const settle = async (status: GenerationStatus, usage: TokenUsage | undefined, counted: boolean) => {
      try {
        await ledger.settle(hold, {
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
        });
      } finally {
        endWork();
      }
    };
    const countPrompt = () => input.messages.reduce((sum, message) => sum + countTextTokens(message.content), 0);
    if (relayed) return this.relayed(route, relay, dropped, settle, countPrompt);
    const request: ChatRequest = {
      upstreamModel: route.row.upstreamModel,
      messages: input.messages,
      maxTokens: input.maxTokens,
      temperature: dropped.includes('temperature') ? undefined : input.temperature,
      topP: dropped.includes('topP') ? undefined : input.topP,
      stop: dropped.includes('stop') ? undefined : input.stop,
      seed: dropped.includes('seed') ? undefined : input.seed,
    };
    let output = '';
    let reported: TokenUsage | undefined;
    let finished = false;
    const events = metered(route.adapter.streamChat(request, { target: route.target }), {
      observe: (event) => {
        if (event.type === 'text-delta') output += event.text;
        else {
          finished = true;
          reported = event.usage;
        }
      },
      settle: async ({ failed, consumerLeft }) => {
        if (failed || !finished) return settle('failed', reported, false);
        const usage = reported ?? { inputTokens: countPrompt(), outputTokens: countTextTokens(output) };
        return settle(consumerLeft ? 'aborted' : 'succeeded', usage, reported === undefined);
      },
    });
    return { kind: 'events', events: await startIteration(events), droppedParameters: dropped };
  }

  private async relayed(
    route: Route,
    relay: NonNullable<TextGenerationInput['relay']>,
    dropped: string[],
    settle: (status: GenerationStatus, usage: TokenUsage | undefined, counted: boolean) => Promise<void>,
    countPrompt: () => number,
  ): Promise<RelayRun> {
    const meter = route.adapter.relayMeter!(relay.operation, relay.streaming);
    let exchange;
    try {
      const upstreamModel = route.row.upstreamModel;
      exchange = await route.adapter.relay!({ operation: relay.operation, upstreamModel, body: relay.prepare(upstreamModel, dropped) }, { target: route.target, headers: relay.headers });
    } catch (error) {
      await settle('failed', undefined, false);
      throw error;
    }
    const body = metered(exchange.body, {
      observe: (chunk) => meter.push(chunk),
      settle: async ({ failed, consumerLeft }) => {
        const reading = meter.reading();
        if (failed || !reading.complete || reading.sawError) return settle('failed', reading.usage, false);
        // An answer without usage is metered by counting: the prompt, and no output we could read from raw bytes.
        const usage = reading.usage ?? { inputTokens: countPrompt(), outputTokens: 0 };
        return settle(consumerLeft ? 'aborted' : 'succeeded', usage, reading.usage === undefined);
      },
    });
    return {
      kind: 'relay',
      status: exchange.status,
      contentType: exchange.contentType,
      body: await startIteration(body),
      reading: () => meter.reading(),
      droppedParameters: dropped,
    };
  }

  private textRoute(modelId: string, rows: readonly ProviderRow[]): Route {
    for (const row of rows) {
      const adapter = this.dependencies.adapters.get(row.protocol)?.text;
      const target = this.dependencies.providers.get(row.providerId);
      if (adapter && target) return { row, adapter, target };
    }
    throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${modelId}" does not generate text`);
  }
}

/** All events of a run, for surfaces that answer with one JSON body. */
export async function collectEvents(events: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const all: ChatStreamEvent[] = [];
  for await (const event of events) all.push(event);
  return all;
}
