import type { CreditLedger, GenerationStatus, Reservation } from '../billing/credit-ledger.ts';
import { requirePricing } from '../billing/pricing.ts';
import {
  countDeliveredTokens,
  countTextTokens,
  defaultMaxOutputTokens,
  promptTokenBound,
  wholeTokens,
} from '../billing/token-estimate.ts';
import { gateParameters } from '../catalog/capability-gate.ts';
import type { Catalog, CatalogModel, ProviderRow } from '../catalog/catalog.ts';
import type { ProviderConfig } from '../config/load-config.ts';
import {
  chatParameters,
  imagesIn,
  isChatParameter,
  promptTextOf,
  type ChatRequest,
  type ChatStreamEvent,
  type TokenUsage,
  type ToolCall,
} from '../domain/chat.ts';
import { DeliveredOutput } from '../domain/delivered-output.ts';
import { GatewayError, isGatewayError } from '../domain/errors.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import { nanosToUsd } from '../domain/money.ts';
import type { Protocol } from '../domain/protocols.ts';
import type {
  AdapterRegistry,
  RelayMeter,
  RelayOperation,
  RelayReading,
  TextAdapter,
} from '../providers/provider-adapter.ts';
import { worthFallingBack } from './fallback.ts';
import type { ProviderBreakers, RowRef } from './provider-breakers.ts';
import { dispatchWithFallback, type Resilience } from './upstream-dispatch.ts';
import type { GenerationAttempt, GenerationRoute } from '../domain/generation-route.ts';
import type { RequestContext } from '../domain/request-context.ts';
import { asUpstreamFailure, readUpstream } from './upstream-reading.ts';
import { metered, startIteration } from './metered.ts';
import type { WorkTracker } from './work-tracker.ts';

/** The canonical request a surface decoded, plus what the pipeline needs to route, gate and bill it. */
export interface TextGenerationInput extends Omit<ChatRequest, 'upstreamModel'> {
  modelId: string;
  /** Every model-dependent parameter the client sent, by the native field name, for the capability gate. */
  gatedParameters: Readonly<Record<string, unknown>>;
  /** What the usage record keeps of the request (no message content). */
  recordedRequest: Record<string, unknown>;
  /** Completions asked for at once (alpha `n`, gamma `candidateCount`); each may use the maximum output. */
  choices?: number;
  /** `false` keeps the call on the winning provider row even when it fails (alpha `provider.allow_fallbacks`). */
  allowFallbacks?: boolean;
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
    /**
     * Builds the upstream body; parameters named in `dropped` (native field names) must be left out, and the
     * protocol's output limit set to `maxOutputTokens`, the limit the reservation covers.
     */
    prepare: (upstreamModel: string, dropped: readonly string[], maxOutputTokens: number) => Record<string, unknown>;
    /** Protocol headers of the client's request that the protocol forwards (version, feature flags). */
    headers?: Readonly<Record<string, string>>;
  };
}

interface RunBase {
  /** Parameters dropped because the model does not take them (`strictParams: false`). */
  droppedParameters: string[];
}

export type EventsRun = RunBase & { kind: 'events'; events: AsyncIterable<ChatStreamEvent> };
export type RelayRun = RunBase & {
  kind: 'relay';
  status: number;
  contentType: string | undefined;
  body: AsyncIterable<Uint8Array>;
  reading: () => RelayReading;
};

/**
 * Iterating `events` or `body` to the end, breaking out, or returning its iterator (even before the first
 * read) always settles the hold exactly once; an iterable nobody iterates or returns keeps it held.
 */
export type TextRun = EventsRun | RelayRun;

export interface GenerationDependencies {
  work: WorkTracker;
  catalog: Catalog;
  ledger: CreditLedger;
  adapters: AdapterRegistry;
  providers: ReadonlyMap<string, ProviderConfig>;
  /** Breakers of the provider rows, the fallback and retry events, and the retry-after budget of a request. */
  resilience: Resilience;
}

interface Route {
  row: ProviderRow;
  adapter: TextAdapter;
  target: ProviderConfig;
}

/** Native names of the optional parameters an adapter that declares nothing else carries. */
const carriedParameters = new Set(['maxTokens', 'temperature', 'topP', 'stop', 'seed', 'tools', 'toolChoice']);

/** A parameter is carried when the surface decoded it into the canonical request and the route's adapter sends it on. */
function carries(route: Route, request: ChatRequest, name: string): boolean {
  if (!isChatParameter(name) || request[name] === undefined) return false;
  return route.adapter.carries ? route.adapter.carries(name, request, route.target) : carriedParameters.has(name);
}

/** Ends the reservation with usage the upstream reported, or that the gateway counted (`counted`). */
type Settle = (status: GenerationStatus, usage: TokenUsage | undefined, counted: boolean) => void;

/** A candidate row as the dispatch tries it. */
type Candidate = RowRef & { route: Route };

/** What one dispatch needs besides the route: the settled request's bookkeeping. */
interface Dispatch {
  input: TextGenerationInput;
  dropped: string[];
  /** The output limit per completion that the reservation covers, sent upstream on every path. */
  maxOutputTokens: number;
  settle: Settle;
  countPrompt: () => number;
}

/** The pipeline for text: resolve -> gate -> price + hold -> dispatch (with fallback) -> meter -> settle. */
export class TextGeneration {
  constructor(private readonly dependencies: GenerationDependencies) {}

  start(caller: RequestContext, input: TextGenerationInput & { relay?: undefined }): Promise<EventsRun>;
  start(caller: RequestContext, input: TextGenerationInput): Promise<TextRun>;
  async start(caller: RequestContext, input: TextGenerationInput): Promise<TextRun> {
    const startedAt = Date.now();
    const { catalog, ledger } = this.dependencies;
    const model = catalog.resolve(input.modelId);
    // Refused before anything is held or sent when the operator gave the model no price.
    const pricing = requirePricing(model);
    if (!model.outputModalities.includes('text'))
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not generate text`);
    if (imagesIn(input.messages) > 0 && !model.inputModalities.includes('image')) {
      throw new GatewayError('GW_VALIDATION', `model "${model.modelId}" does not accept image input`);
    }
    const routes = this.textRoutes(model.modelId, model.rows);
    const { dropped } = gateParameters({
      modelId: model.modelId,
      capabilities: routes[0]!.row.capabilities,
      scope: 'text',
      optional: input.gatedParameters,
    });
    const [blocker] = input.untranslatable ?? [];
    const usable = blocker ? routes.filter((route) => this.relays(route, input)) : routes;
    if (usable.length === 0)
      throw new GatewayError('GW_VALIDATION', `model "${model.modelId}" cannot take ${blocker} through this surface`);
    const maxOutputTokens = input.maxTokens ?? model.maxOutputTokens ?? defaultMaxOutputTokens;
    const choices = input.choices ?? 1;
    // Surfaces validate both, but money arithmetic depends on them being whole: checked once more where they are used.
    if (!Number.isSafeInteger(maxOutputTokens) || maxOutputTokens < 1)
      throw new GatewayError(
        'GW_VALIDATION',
        `the output token limit must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`,
      );
    if (!Number.isSafeInteger(choices) || choices < 1)
      throw new GatewayError(
        'GW_VALIDATION',
        `the number of completions must be a whole number from 1 to ${Number.MAX_SAFE_INTEGER}`,
      );
    // Linear in the request's size: nothing costlier runs before the reservation admits the request.
    const inputTokens = promptTokenBound(input.messages, input.tools);
    const reservation = await ledger.reserve({
      accountId: caller.accountId,
      apiKeyId: caller.apiKeyId,
      amountNanos: ledger.tokenCost(model, { inputTokens, outputTokens: maxOutputTokens * choices }),
      modelId: model.modelId,
      requestLog: caller.log,
      whatFits: (free) => largestOutputLimit(pricing, inputTokens, choices, free),
    });
    reservation.whenEnded(this.dependencies.work.begin());
    const candidates: Candidate[] = (input.allowFallbacks === false ? usable.slice(0, 1) : usable).map((route) => ({
      providerId: route.row.providerId,
      upstreamModel: route.row.upstreamModel,
      route,
    }));
    const route: GenerationRoute = {
      providerId: candidates[0]!.providerId,
      upstreamModel: candidates[0]!.upstreamModel,
      fallbacks: [],
      ...(caller.requestId ? { requestId: caller.requestId } : {}),
    };
    const settle = this.settler(reservation, model, input.recordedRequest, route);
    const dispatch: Dispatch = {
      input,
      dropped,
      maxOutputTokens,
      settle,
      countPrompt: () =>
        input.messages.reduce((sum, message) => sum + countTextTokens(promptTextOf(message.content)), 0),
    };
    const attempts: GenerationAttempt[] = [];
    try {
      const { value, row } = await dispatchWithFallback<Candidate, TextRun>({
        modelId: model.modelId,
        accountId: caller.accountId,
        rows: candidates,
        resilience: this.dependencies.resilience,
        // A run that failed after its meter settled it has nothing left to end, and no other row may serve it;
        // otherwise nothing has reached the client yet, and another row may serve it under the same reservation.
        mayContinue: (error) => !reservation.isEnded && worthFallingBack(error),
        attempt: (candidate): Promise<TextRun> =>
          this.relays(candidate.route, input)
            ? this.relayed(candidate.route, dispatch)
            : this.translated(candidate.route, dispatch),
        attempts,
      });
      Object.assign(route, {
        providerId: row.providerId,
        upstreamModel: row.upstreamModel,
        fallbacks: attempts,
        firstByteMs: Date.now() - startedAt,
      });
      return value;
    } catch (error) {
      const last = attempts.at(-1);
      if (last)
        Object.assign(route, {
          providerId: last.providerId,
          upstreamModel: last.upstreamModel,
          fallbacks: attempts.slice(0, -1),
        });
      if (reservation.isEnded) throw error;
      // The gateway's own refusal of what it would have sent: nothing went upstream, so nothing is recorded.
      // The client is told of its request, not of storage failing to give the hold back (that is reported).
      if (isGatewayError(error)) await reservation.release().catch(() => undefined);
      else settle('failed', undefined, false);
      throw error;
    }
  }

  /**
   * Settles the reservation with token usage at the model's prices; the reservation caps the charge at what it
   * holds. `route` is read when the settlement is made, by then filled in by the dispatch.
   */
  private settler(
    reservation: Reservation,
    model: CatalogModel,
    request: Record<string, unknown>,
    route: GenerationRoute,
  ): Settle {
    const { ledger } = this.dependencies;
    return (status, reported, counted) => {
      const usage = reported && {
        inputTokens: wholeTokens(reported.inputTokens),
        outputTokens: wholeTokens(reported.outputTokens),
      };
      reservation.settleInBackground({
        costNanos: usage ? ledger.tokenCost(model, usage) : 0n,
        modality: 'text',
        status,
        request,
        route,
        usage: usage && {
          promptTokens: usage.inputTokens,
          completionTokens: usage.outputTokens,
          totalTokens: usage.inputTokens + usage.outputTokens,
          ...(counted ? { countedByGateway: true } : {}),
        },
      });
    };
  }

  private relays(route: Route, input: TextGenerationInput): boolean {
    return (
      input.relay !== undefined &&
      input.relay.protocol === route.row.protocol &&
      route.adapter.relay !== undefined &&
      route.adapter.relayMeter !== undefined
    );
  }

  /** Dispatch through the canonical model; resolves once the first event is in, or throws without settling. */
  private async translated(
    route: Route,
    { input, dropped, maxOutputTokens, settle, countPrompt }: Dispatch,
  ): Promise<EventsRun> {
    const request: ChatRequest = {
      ...chatParameters(input, dropped),
      upstreamModel: route.row.upstreamModel,
      messages: input.messages,
      // The output limit the reservation covers, so a translated call cannot cost more than was reserved.
      maxTokens: maxOutputTokens,
    };
    const upstream = await startIteration(readUpstream(route.adapter.streamChat(request, { target: route.target })));
    const output = new DeliveredOutput();
    let reported: TokenUsage | undefined;
    let finished = false;
    const events = metered(upstream, {
      observe: (event) => {
        if (event.type === 'text-delta') output.add(event.text);
        else if (event.type === 'tool-call-start') output.add(event.name);
        else if (event.type === 'tool-call-delta') output.add(event.arguments);
        else {
          finished = true;
          reported = event.usage;
        }
      },
      settle: ({ failed, consumerLeft }) => {
        // A stream cut mid-way is charged what it delivered: the prompt and the output counted so far.
        const usage = reported ?? { inputTokens: countPrompt(), outputTokens: countDeliveredTokens(output) };
        settle(failed || !finished ? 'failed' : consumerLeft ? 'aborted' : 'succeeded', usage, reported === undefined);
      },
    });
    // Accepted by the model but not carried by the canonical request to another protocol: reported, never silently lost.
    const notCarried = Object.keys(input.gatedParameters).filter(
      (name) => input.gatedParameters[name] !== undefined && !carries(route, request, name),
    );
    return {
      kind: 'events',
      events: await startIteration(events),
      droppedParameters: [...new Set([...dropped, ...notCarried])],
    };
  }

  /** Same-protocol pass-through; resolves once the first bytes are in, or throws without settling. */
  private async relayed(
    route: Route,
    { input, dropped, maxOutputTokens, settle, countPrompt }: Dispatch,
  ): Promise<RelayRun> {
    const relay = input.relay!;
    const meter = route.adapter.relayMeter!(relay.operation, relay.streaming, route.target.maxEventCharacters);
    const upstreamModel = route.row.upstreamModel;
    const exchange = await route.adapter.relay!(
      { operation: relay.operation, upstreamModel, body: relay.prepare(upstreamModel, dropped, maxOutputTokens) },
      { target: route.target, headers: relay.headers },
    );
    const upstream = await startIteration(exchange.body);
    const body = metered(upstream, {
      observe: (chunk) => {
        try {
          meter.push(chunk);
        } catch (error) {
          // An event that breaks the protocol ends the relay; the upstream is let go rather than left unread.
          void upstream[Symbol.asyncIterator]().return?.();
          throw asUpstreamFailure(error);
        }
      },
      settle: ({ failed, consumerLeft }) => {
        const reading = readingOf(meter);
        const status =
          failed || !reading.complete || reading.sawError ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        if (status !== 'failed' && reading.usage) return settle(status, reading.usage, false);
        // Counted only when needed: an answer without usage, or one cut mid-way, which is charged at least what
        // it delivered (a stream's running usage may lag its last events).
        const output = countDeliveredTokens(reading.output);
        const usage = {
          inputTokens: reading.usage?.inputTokens || countPrompt(),
          outputTokens: Math.max(reading.usage?.outputTokens ?? 0, output),
        };
        settle(status, usage, reading.usage === undefined || output > reading.usage.outputTokens);
      },
    });
    return {
      kind: 'relay',
      status: exchange.status,
      contentType: exchange.contentType,
      body: await startIteration(body),
      reading: () => readingOf(meter),
      droppedParameters: [...new Set([...dropped, ...(exchange.dropped ?? [])])],
    };
  }

  /** The model's provider rows that this build can call for text, best first; 400 when there is none. */
  private textRoutes(modelId: string, rows: readonly ProviderRow[]): Route[] {
    const routes: Route[] = [];
    for (const row of rows) {
      const adapter = this.dependencies.adapters.get(row.protocol)?.text;
      const target = this.dependencies.providers.get(row.providerId);
      if (adapter && target) routes.push({ row, adapter, target });
    }
    if (routes.length === 0)
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${modelId}" does not generate text`);
    return routes;
  }
}

/** The meter's reading; a copy it cannot read (an answer that broke it) reads as a failure that delivered nothing. */
function readingOf(meter: RelayMeter): RelayReading {
  try {
    return meter.reading();
  } catch {
    return { usage: undefined, complete: false, sawTerminator: false, sawError: true, output: new DeliveredOutput() };
  }
}

/**
 * What fits in `freeNanos` of credits, for the refusal's message: the largest output limit per completion
 * whose reservation the free credits cover, or that even the prompt does not fit.
 */
function largestOutputLimit(pricing: ModelPricing, inputTokens: number, choices: number, freeNanos: bigint): string {
  const budget = freeNanos * 1_000_000n - BigInt(inputTokens) * (pricing.inputNanosPerMTok ?? 0n);
  const perToken = (pricing.outputNanosPerMTok ?? 0n) * BigInt(choices);
  if (budget < 0n || (perToken > 0n && budget / perToken < 1n))
    return `${nanosToUsd(freeNanos)} USD is available, which does not cover this prompt with any output`;
  if (perToken === 0n) return `${nanosToUsd(freeNanos)} USD is available`;
  return `${nanosToUsd(freeNanos)} USD is available, which covers an output limit of at most ${budget / perToken} tokens`;
}

/** The whole answer of a run, for surfaces that reply with one JSON body. */
export interface CollectedAnswer {
  text: string;
  /** In the order the model made them, arguments whole. */
  toolCalls: ToolCall[];
  finish: Extract<ChatStreamEvent, { type: 'finish' }> | undefined;
}

export async function collectAnswer(events: AsyncIterable<ChatStreamEvent>): Promise<CollectedAnswer> {
  const answer: CollectedAnswer = { text: '', toolCalls: [], finish: undefined };
  const calls = new Map<number, ToolCall>();
  for await (const event of events) {
    if (event.type === 'text-delta') answer.text += event.text;
    else if (event.type === 'tool-call-start')
      calls.set(event.index, { id: event.id, name: event.name, arguments: '' });
    else if (event.type === 'tool-call-delta') {
      const call = calls.get(event.index);
      if (call) call.arguments += event.arguments;
    } else answer.finish = event;
  }
  answer.toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
  return answer;
}
