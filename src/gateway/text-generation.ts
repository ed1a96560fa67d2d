import type { GenerationStatus } from '../billing/credit-ledger.ts';
import { requirePricing, tokenCost } from '../billing/pricing.ts';
import { defaultMaxOutputTokens, promptTokenBound } from '../billing/token-estimate.ts';
import { gateParameters, spelled, type FieldNames } from '../catalog/capability-gate.ts';
import { countTextTokens } from '../domain/tokenizer.ts';
import type { CatalogModel } from '../catalog/catalog.ts';
import {
  chatParameters,
  imagesIn,
  isChatParameter,
  promptTextOf,
  type ChatMessage,
  type ChatParameterName,
  type ChatRequest,
  type ChatStreamEvent,
  type ResponseFormat,
  type TokenUsage,
  wholeTokens,
} from '../domain/chat.ts';
import { countDeliveredTokens, countedUsage, DeliveredOutput } from '../domain/delivered-output.ts';
import { GatewayError } from '../domain/errors.ts';
import { UpstreamUnreachableError } from '../domain/upstream-failure.ts';
import { collectAnswer, type CollectedAnswer } from './collected-answer.ts';
import type { ModelPricing } from '../domain/model-pricing.ts';
import type { Protocol } from '../domain/protocols.ts';
import type { Caller, RequestContext } from '../domain/request-context.ts';
import type { RelayOperation, RelayReading } from '../providers/provider-adapter.ts';
import type { Charge, GenerationPipeline, Plan, Recipe } from './generation-pipeline.ts';
import { meterReading } from './meter-reading.ts';
import { metered, startIteration } from './metered.ts';
import { servingRows, type ServingRow } from './serving-rows.ts';
import { servedAs } from '../providers/shared/served-model.ts';
import { readUpstream } from './upstream-reading.ts';
import { chatEventLimit, heldOutputLimit, relayedWithin } from './output-limits.ts';

/** What a same-protocol relay's body is rewritten with: the row's model id, the settings dropped, the output limit. */
export interface RelayTerms {
  upstreamModel: string;
  droppedNativeNames: readonly string[];
  maxOutputTokens: number;
}

/** The canonical request a surface decoded, plus what the pipeline needs to route, gate and bill it. */
export interface TextGenerationInput extends Omit<ChatRequest, 'upstreamModel'> {
  modelId: string;
  /** Every model-dependent parameter the client sent, by the native field name, for the capability gate. */
  gatedParameters: Readonly<Record<string, unknown>>;
  /** Parameters carried without the gate (inside a gated field), by native name: named when a translation drops them. */
  ungatedParameters?: Readonly<Record<string, unknown>>;
  /**
   * How the client named its parameters where its surface names them otherwise (alpha `frequency_penalty`, `n`;
   * gamma `generationConfig.candidateCount`): refusals and `droppedParameters` name them so.
   */
  fieldNames?: FieldNames;
  /** What the usage record keeps of the request (no message content). */
  recordedRequest: Record<string, unknown>;
  /** `false` keeps the call on the winning provider row even when it fails (alpha `provider.allow_fallbacks`). */
  allowFallbacks?: boolean;
  /**
   * Features of the request the canonical model cannot carry yet (for example image parts): fine when the
   * request is relayed to an upstream of its own protocol, a 400 naming the model when it must be translated.
   * The first one is the refusal's.
   */
  untranslatable?: readonly Untranslatable[];
  /**
   * The request carries input the prompt bound does not count, as its decoder found walking it (a file, audio, a
   * document, thinking sent back...): a relay, which forwards it, is charged past its hold (see TokenCharge). A
   * translated call carries almost none of it: such input is untranslatable, or left out and named; a gamma
   * `fileData` web address of no media type, taken for a picture, is sent on as one (and bounded as one).
   */
  uncountedInput?: boolean;
  /**
   * The fields naming the call of each tool result whose call the conversation does not hold (beta
   * `body.messages[0].content[0].tool_use_id`): such a result has no function name, which some protocols answer
   * a call by (`TextAdapter.answersCallsByName`), so no row translating to one of them serves the request.
   */
  unmatchedToolResults?: readonly string[];
  /**
   * Fields of the request the canonical model does not carry, that the call may go without: carried when the
   * request is relayed to an upstream of its own protocol, named as dropped when it is translated.
   */
  notTranslated?: readonly string[];
  /**
   * The client's answer is one body, not a stream. A translated call streams from its upstream all the same: the
   * stream is read to its end within the attempt, so an upstream that breaks before the end has sent the client
   * nothing, a failure before the first byte (the next row is tried; if none serves, nothing is charged).
   */
  whole?: boolean;
  /**
   * The request in the surface's own wire shape. When the winning provider speaks that protocol it is
   * forwarded as given (`prepare` may rewrite fields such as the model id) and the answer relayed as it comes.
   */
  relay?: {
    protocol: Protocol;
    operation: RelayOperation;
    streaming: boolean;
    /**
     * Builds the upstream body; parameters named in `droppedNativeNames` (native field names) must be left out, and the
     * protocol's output limit set to `maxOutputTokens`, the limit the reservation covers.
     */
    prepare: (terms: RelayTerms) => Record<string, unknown>;
    /** Protocol headers of the client's request that the protocol forwards (version, feature flags). */
    headers?: Readonly<Record<string, string>>;
  };
}

/**
 * A feature only a relay carries: its name in the refusal, or with the details the client's SDK recovers by
 * (beta `thread`: Anthropic's SDK goes on without a thread on `thread_unsupported_request`).
 */
export type Untranslatable = string | { feature: string; sdkDetails: Readonly<Record<string, unknown>> };

/** The refusal of a request that only a relay could serve, for want of a relaying row. */
function untranslatableRefusal(model: CatalogModel, blocker: Untranslatable): GatewayError {
  const feature = typeof blocker === 'string' ? blocker : blocker.feature;
  return new GatewayError(
    'GW_VALIDATION',
    `model "${model.modelId}" cannot take ${feature} through this surface`,
  ).withSdkDetails(typeof blocker === 'string' ? undefined : blocker.sdkDetails);
}

/**
 * The rows that can answer every tool result: a result whose call the conversation does not hold has no
 * function name, so a row translating to a protocol that answers a call by its name cannot send it (Gemini's
 * `functionResponse.name` is required; the protocols' own APIs refuse such a result too). A 400 naming the
 * first such result's field when no row is left.
 */
function rowsNamingToolResults(model: CatalogModel, rows: TextRow[], input: TextGenerationInput): TextRow[] {
  const [unmatched] = input.unmatchedToolResults ?? [];
  if (unmatched === undefined) return rows;
  const naming = rows.filter((row) => relays(row, input) || row.adapter.answersCallsByName !== true);
  if (naming.length === 0)
    throw new GatewayError(
      'GW_VALIDATION',
      `${unmatched} names no tool call of an earlier turn of the conversation, and model "${model.modelId}" answers a tool call by its function's name: send the call with its result`,
    );
  return naming;
}

interface RunBase {
  /**
   * Parameters the call goes without (the model does not take them under `strictParams: false`, or the protocol
   * it is translated to has no place for them), as the client named them.
   */
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

/** A translated answer the client asked for whole (`whole`), collected from its upstream's stream. */
export type WholeRun = RunBase & { kind: 'whole'; answer: CollectedAnswer };

/**
 * Iterating `events` or `body` to the end, breaking out, or returning its iterator (even before the first
 * read) always settles the hold exactly once; an iterable nobody iterates or returns keeps it held. A whole
 * run is settled when it is served.
 */
export type TextRun = EventsRun | RelayRun | WholeRun;

/** What one attempt makes: a run, a whole one with the settlement its serving makes. */
type TextAttempt = EventsRun | RelayRun | (WholeRun & { settle: () => void });

type TextRow = ServingRow<'text'>;

/** Native names of the optional parameters an adapter that declares nothing else carries. */
const carriedParameters = new Set(['maxTokens', 'temperature', 'topP', 'stop', 'seed', 'tools', 'toolChoice']);

/** A parameter is carried when the surface decoded it into the canonical request and the row's adapter sends it on. */
function carries(route: TextRow, request: ChatRequest, name: string): boolean {
  if (!isChatParameter(name) || request[name] === undefined) return false;
  return route.adapter.carries ? route.adapter.carries(name, request, route.target) : carriedParameters.has(name);
}

/** A request as the rows are checked against it: the input and the parameters the gate already dropped. */
interface GatedInput {
  input: TextGenerationInput;
  dropped: readonly string[];
}

/** Whether the row carries the parameter `name` of the request: relayed as given, or translated. */
function rowCarries(row: TextRow, { input, dropped }: GatedInput, name: string): boolean {
  if (relays(row, input)) return true;
  const request = { ...chatParameters(input, dropped), upstreamModel: row.row.upstreamModel, messages: input.messages };
  return carries(row, request, name);
}

/**
 * The rows that can serve what makes the answer what it is: its format and the number of completions. A format
 * no row carries is refused (never an answer of another shape); several completions no row gives are refused
 * too, unless the model drops what it does not take (`strictParams: false`): then the answer is one completion.
 */
function rowsShapingTheAnswer(
  model: CatalogModel,
  rows: TextRow[],
  gated: GatedInput,
): { rows: TextRow[]; dropped: string[] } {
  const { input, dropped } = gated;
  const shaping: ChatParameterName[] = [];
  // Plain text is what every row answers: only a JSON answer needs a row that can ask for one.
  const format = sentFormat(input, dropped);
  if (format !== undefined && format.type !== 'text') shaping.push('responseFormat');
  if ((input.choices ?? 1) > 1) shaping.push('choices');
  let serving = rows;
  const left = [...dropped];
  for (const name of shaping) {
    const carrying = serving.filter((row) => rowCarries(row, gated, name));
    if (carrying.length > 0) serving = carrying;
    else if (name === 'choices' && rows[0]!.row.capabilities?.strictParams === false) left.push(name);
    else
      throw new GatewayError(
        'GW_PARAMETER_UNSUPPORTED',
        `model "${model.modelId}" does not support parameter "${input.fieldNames?.[name] ?? name}" as this request asks it`,
      );
  }
  return { rows: serving, dropped: left };
}

/** The response format the request is sent with: none once it is dropped. */
function sentFormat(input: TextGenerationInput, dropped: readonly string[]): ResponseFormat | undefined {
  return dropped.includes('responseFormat') ? undefined : input.responseFormat;
}

/**
 * Dropped parameters as the client is told them, each once: those named natively (`native`) as the client's own
 * protocol spells the field it sent (`fieldNames`: gamma `generationConfig.seed`, alpha `presence_penalty`), and
 * the fields already named as the client wrote them (`asWritten`: unnamed fields, what only a relay carries).
 */
function droppedNames(
  input: TextGenerationInput,
  { native, asWritten }: { native: readonly string[]; asWritten: readonly string[] },
): string[] {
  return [...new Set([...native.map((name) => spelled(input.fieldNames, name)), ...asWritten])];
}

/** Whether the request asks its answer held to its schema: natively, or by a format the client asked `strict`. */
function structuredOutputsAsked({
  structuredOutputs,
  responseFormat,
}: Pick<ChatRequest, 'structuredOutputs' | 'responseFormat'>): boolean | undefined {
  if (structuredOutputs !== undefined) return structuredOutputs;
  return responseFormat?.type === 'json_schema' && responseFormat.strict === true ? true : undefined;
}

/** A text request after the capability gate: its rows, its hold, and what every attempt sends. */
interface TextPlan extends Plan<TextRow> {
  model: CatalogModel;
  input: TextGenerationInput;
  dropped: string[];
  /** The output limit per completion that the hold covers, sent upstream on every path. */
  maxOutputTokens: number;
  /** Completions the answer carries, each held at the whole output limit. */
  choices: number;
}

/** The recipe for text: chat and its relays, streamed or whole, translated or passed through. */
class TextRecipe implements Recipe<TextGenerationInput, TextRow, TextPlan, TextAttempt, TextRun> {
  readonly modality = 'text';

  constructor(private readonly pipeline: GenerationPipeline) {}

  plan(model: CatalogModel, input: TextGenerationInput): TextPlan {
    // Refused before anything is held or sent when the operator gave the model no price.
    const pricing = requirePricing(model);
    if (!model.outputModalities.includes('text'))
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not generate text`);
    if (imagesIn(input.messages) > 0 && !model.inputModalities.includes('image')) {
      throw new GatewayError('GW_VALIDATION', `model "${model.modelId}" does not accept image input`);
    }
    const rows = servingRows(this.pipeline.rowSources, model, 'text');
    if (rows.length === 0)
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not generate text`);
    const gate = gateParameters({
      modelId: model.modelId,
      capabilities: rows[0]!.row.capabilities,
      scope: 'text',
      optional: input.gatedParameters,
      fieldNames: input.fieldNames,
    });
    const [blocker] = input.untranslatable ?? [];
    const translatable = blocker ? rows.filter((row) => relays(row, input)) : rows;
    if (blocker && translatable.length === 0) throw untranslatableRefusal(model, blocker);
    const { rows: usable, dropped } = rowsShapingTheAnswer(model, rowsNamingToolResults(model, translatable, input), {
      input,
      dropped: gate.dropped,
    });
    const maxOutputTokens = input.maxTokens ?? model.maxOutputTokens ?? defaultMaxOutputTokens;
    const choices = dropped.includes('choices') ? 1 : (input.choices ?? 1);
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
    // Linear in the request's size: nothing costlier runs before the hold admits the request.
    const inputTokens = promptTokenBound(input.messages, input.tools, sentFormat(input, dropped));
    return {
      rows: input.allowFallbacks === false ? usable.slice(0, 1) : usable,
      holdNanos: tokenCost(pricing, { inputTokens, outputTokens: maxOutputTokens * choices }),
      recordedRequest: input.recordedRequest,
      whatFits: (free) => largestOutputLimit(pricing, { inputTokens, choices }, free),
      model,
      input,
      dropped,
      maxOutputTokens,
      choices,
    };
  }

  dispatch(row: TextRow, plan: TextPlan, charge: Charge): Promise<TextAttempt> {
    return relays(row, plan.input) ? this.relayed(row, plan, charge) : this.translated(row, plan, charge);
  }

  served(attempt: TextAttempt): TextRun {
    if (attempt.kind !== 'whole') return attempt;
    attempt.settle();
    return { kind: 'whole', answer: attempt.answer, droppedParameters: attempt.droppedParameters };
  }

  /**
   * Dispatch through the canonical model; resolves once the first event is in (for a whole answer, once the last
   * one is), or throws without settling.
   */
  private async translated(route: TextRow, plan: TextPlan, charge: Charge): Promise<TextAttempt> {
    const { input, dropped, maxOutputTokens, choices } = plan;
    const parameters = chatParameters(input, dropped);
    const request: ChatRequest = {
      ...parameters,
      structuredOutputs: structuredOutputsAsked(parameters),
      strictTools: parameters.tools?.some((tool) => tool.strict === true) === true ? true : undefined,
      upstreamModel: route.row.upstreamModel,
      messages: input.messages,
      // The output limit the hold covers, so a translated call cannot cost more than was held.
      maxTokens: maxOutputTokens,
    };
    const upstream = await startIteration(readUpstream(route.adapter.streamChat(request, { target: route.target })));
    const tokens = new TokenCharge(charge, plan.model);
    const output = new DeliveredOutput();
    let reported: TokenUsage | undefined;
    let finished = false;
    // Whether the output limit ended the answer: its usage is then the gateway's own count.
    let cut = false;
    // How the meter ended, and the settlement it makes: at once for a stream; for a whole answer, once served.
    const ending: { status?: GenerationStatus; settle?: () => void } = {};
    const events = metered(upstream, {
      // Every completion may use the whole limit, and the hold covers them all.
      limit: chatEventLimit(maxOutputTokens * choices, () => {
        cut = true;
        return { inputTokens: promptTokens(plan), outputTokens: countDeliveredTokens(output) };
      }),
      observe: (event) => {
        if (event.type === 'text-delta') output.add(event.text);
        else if (event.type === 'tool-call-start') output.add(event.name);
        else if (event.type === 'tool-call-delta') output.add(event.arguments);
        else if (event.type === 'finish') {
          finished = true;
          reported = event.usage;
        }
      },
      settle: ({ failed, consumerLeft }) => {
        // A stream cut mid-way is charged what it delivered: the prompt and the output counted so far. A whole
        // answer that broke delivered nothing: its attempt fails unsettled.
        const billed = billedUsage(reported, { plan, output });
        const status = failed || !finished ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        ending.status = status;
        ending.settle = () => tokens.settle(status, { usage: billed.usage, counted: billed.counted || cut });
        if (!input.whole) ending.settle();
      },
    });
    // Accepted by the model but not carried by the canonical request to another protocol: reported, never silently lost.
    // A format the client's protocol holds strictly (`heldFormat`), or one it asked `strict`, asks for structured
    // outputs as its own parameters do; a strict tool asks its arguments held alike.
    const sent: Readonly<Record<string, unknown>> = {
      ...input.gatedParameters,
      ...input.ungatedParameters,
      structuredOutputs: request.structuredOutputs,
      strictTools: request.strictTools,
    };
    const notCarried = Object.keys(sent).filter((name) => sent[name] !== undefined && !carries(route, request, name));
    const droppedParameters = droppedNames(input, {
      native: [...dropped, ...notCarried],
      asWritten: input.notTranslated ?? [],
    });
    if (!input.whole) return { kind: 'events', events: await startIteration(events), droppedParameters };
    // Nothing of a whole answer reaches the client before its end: a stream that breaks first throws here,
    // unsettled, as a failure before the first byte.
    const answer = await collectAnswer(events);
    if (ending.status !== 'succeeded' || !ending.settle)
      throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
    return { kind: 'whole', answer, droppedParameters, settle: ending.settle };
  }

  /** Same-protocol pass-through; resolves once the first bytes are in, or throws without settling. */
  private async relayed(route: TextRow, plan: TextPlan, charge: Charge): Promise<RelayRun> {
    const { input, dropped, maxOutputTokens, choices } = plan;
    const relay = input.relay!;
    const upstreamModel = route.row.upstreamModel;
    const exchange = await route.adapter.relay!(
      {
        operation: relay.operation,
        upstreamModel,
        body: relay.prepare({ upstreamModel, droppedNativeNames: dropped, maxOutputTokens }),
      },
      { target: route.target, headers: relay.headers },
    );
    // Made once the upstream has answered: nothing of the meter lives through the wait for it.
    const meter = route.adapter.relayMeter!(relay.operation, {
      streaming: relay.streaming,
      maxEventCharacters: route.target.maxEventCharacters,
      // Every completion asked for may use the whole limit, and the hold covers them all.
      limit: heldOutputLimit(maxOutputTokens * choices),
      // The answer names the catalog model the client asked for, as a translated answer does.
      servedAs: servedAs(relay.operation, plan.model.modelId),
      whole: exchange.whole,
      // What an answer the limit ends says it is billed.
      promptTokens: () => promptTokens(plan),
    });
    // Input the bound left out: parts the decoder met (the relay forwards them as sent), or what the forwarded
    // request names for the upstream to read.
    const unseenInput = input.uncountedInput === true || exchange.unseenInput === true;
    const tokens = new TokenCharge(charge, plan.model, { unseenInput });
    // The meter reads the stream's first event and those that came with it before the answer starts (the
    // adapter only waited for it): one that breaks the protocol fails this attempt, which another row may serve,
    // never a stream the client already has.
    const upstream = await startIteration(relayedWithin(exchange.body, meter));
    const body = metered(upstream, {
      observe: () => undefined,
      settle: ({ failed, consumerLeft }) => {
        const reading = meterReading(meter, unreadableRelay);
        const status =
          failed || !reading.complete || reading.sawError ? 'failed' : consumerLeft ? 'aborted' : 'succeeded';
        // An answer the output limit ended (`meter.cut`) carries the upstream's usage so far only.
        if (status !== 'failed' && reading.usage && !meter.cut)
          return tokens.settle(status, billedUsage(reading.usage, { plan, output: reading.output }));
        // Counted only when needed: an answer without usage, or one cut mid-way (by the upstream or the limit),
        // which is charged at least what it delivered.
        const usage = countedUsage(reading.usage, reading.output, () => promptTokens(plan));
        tokens.settle(status, {
          usage,
          counted: reading.usage === undefined || usage.outputTokens > reading.usage.outputTokens,
        });
      },
    });
    return {
      kind: 'relay',
      status: exchange.status,
      contentType: exchange.contentType,
      body: await startIteration(body),
      reading: () => meterReading(meter, unreadableRelay),
      droppedParameters: droppedNames(input, { native: dropped, asWritten: exchange.dropped ?? [] }),
    };
  }
}

/** The pipeline for text, run with the text recipe. */
export class TextGeneration {
  private readonly recipe: TextRecipe;

  constructor(private readonly pipeline: GenerationPipeline) {
    this.recipe = new TextRecipe(pipeline);
  }

  start(context: RequestContext, input: TextGenerationInput & { relay?: undefined; whole?: false }): Promise<EventsRun>;
  start(context: RequestContext, input: TextGenerationInput): Promise<TextRun>;
  start(context: RequestContext, input: TextGenerationInput): Promise<TextRun> {
    return this.pipeline.run(context, this.recipe, input);
  }

  /**
   * A token count a client asks for before sending (the protocols' count_tokens), of a prompt to a catalog text
   * model: the gateway's own count, nothing held or charged. Counting is work in the prompt's size, so the
   * model and the key (balance above zero, no cap reached) are checked first, as for a generation.
   */
  async countTokens(caller: Caller, modelId: string, prompt: () => readonly ChatMessage[]): Promise<number> {
    const model = this.pipeline.catalog.resolve(modelId);
    if (!model.outputModalities.includes('text'))
      throw new GatewayError('GW_MODEL_NOT_AVAILABLE', `model "${model.modelId}" does not generate text`);
    await this.pipeline.admitWork(caller);
    return countPromptTokens(prompt());
  }
}

function relays(route: TextRow, input: TextGenerationInput): boolean {
  return (
    input.relay !== undefined &&
    input.relay.protocol === route.row.protocol &&
    route.adapter.relay !== undefined &&
    route.adapter.relayMeter !== undefined
  );
}

/** The prompt's tokens as the gateway counts them, for an answer that reported none. */
function promptTokens(plan: TextPlan): number {
  return countPromptTokens(plan.input.messages);
}

/**
 * The usage an answer bills: the upstream's report, except that a count of none where the gateway sees tokens
 * (an upstream that left a count out, or sent it null or below zero, reads as 0) is no count: that part is the
 * gateway's own count. Without a report, both parts are. `counted` says whether any part is the gateway's.
 */
function billedUsage(
  reported: TokenUsage | undefined,
  { plan, output }: { plan: TextPlan; output: DeliveredOutput },
): { usage: TokenUsage; counted: boolean } {
  const inputTokens = reported && reported.inputTokens > 0 ? reported.inputTokens : promptTokens(plan);
  const outputTokens = reported && reported.outputTokens > 0 ? reported.outputTokens : countDeliveredTokens(output);
  const counted =
    reported === undefined ||
    (inputTokens > 0 && reported.inputTokens === 0) ||
    (outputTokens > 0 && reported.outputTokens === 0);
  return { usage: reported ? { ...reported, inputTokens, outputTokens } : { inputTokens, outputTokens }, counted };
}

/** The gateway's own count of a prompt's tokens: what it bills as input when an upstream reports no usage. */
export function countPromptTokens(messages: readonly ChatMessage[]): number {
  return messages.reduce((sum, message) => sum + countTextTokens(promptTextOf(message.content)), 0);
}

/**
 * What a text reading costs: token usage the upstream reported, or that the gateway counted (`counted`), at the
 * model's prices; the hold caps the charge, unless the upstream read input the gateway was not sent
 * (`unseenInput`): that cost is claimed past the hold, within what the account and the key have free.
 */
class TokenCharge {
  constructor(
    private readonly charge: Charge,
    private readonly model: CatalogModel,
    private readonly terms: { unseenInput: boolean } = { unseenInput: false },
  ) {}

  settle(status: GenerationStatus, { usage, counted }: { usage: TokenUsage; counted: boolean }): void {
    const inputTokens = wholeTokens(usage.inputTokens);
    const outputTokens = wholeTokens(usage.outputTokens);
    const cost = tokenCost(requirePricing(this.model), { inputTokens, outputTokens });
    const recorded = {
      promptTokens: inputTokens,
      completionTokens: outputTokens,
      totalTokens: inputTokens + outputTokens,
      ...(counted ? { countedByGateway: true } : {}),
    };
    if (this.terms.unseenInput) this.charge.settleUnseenInput(status, cost, recorded);
    else this.charge.settle(status, cost, recorded);
  }
}

/** A meter that could not read its copy (an answer that broke it): a failure that delivered nothing. */
function unreadableRelay(): RelayReading {
  return { usage: undefined, complete: false, sawTerminator: false, sawError: true, output: new DeliveredOutput() };
}

/**
 * What `freeNanos` of credits cover, for the refusal's message (after how much they are): the largest output
 * limit per completion whose reservation they cover, or that even the prompt does not fit.
 */
function largestOutputLimit(
  pricing: ModelPricing,
  { inputTokens, choices }: { inputTokens: number; choices: number },
  freeNanos: bigint,
): string | undefined {
  const budget = freeNanos * 1_000_000n - BigInt(inputTokens) * (pricing.inputNanosPerMTok ?? 0n);
  const perToken = (pricing.outputNanosPerMTok ?? 0n) * BigInt(choices);
  if (budget < 0n || (perToken > 0n && budget / perToken < 1n))
    return 'which does not cover this prompt with any output';
  if (perToken === 0n) return undefined;
  return `which covers an output limit of at most ${budget / perToken} tokens`;
}
