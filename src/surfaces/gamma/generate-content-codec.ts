import {
  argumentsObject,
  compactContent,
  heldFormat,
  leftOut,
  newInputNotes,
  contentInParts,
  toolDefinition,
  unnamedFormat,
  userTurn,
  type ChatMessage,
  type ChatPart,
  type ChatRequest,
  type ChatStreamEvent,
  type DecodedChat,
  type FinishReason,
  type InputNotes,
  type ResponseFormat,
  type ThinkingConfig,
  type TokenLogprob,
  type ToolCall,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { requireNestingWithin } from '../../domain/nesting.ts';
import { jsonSchemaOf } from './openapi-schema.ts';
import type { CollectedAnswer, CollectedChoice } from '../../gateway/collected-answer.ts';
import type { FunctionCall, FunctionResponse, Part } from '../../protocols/gemini/content.ts';
import {
  wireFinishReasons,
  wireLogprobsResult,
  wireUsageMetadata,
  type Candidate,
  type GeminiError,
  type GenerateContentRequest,
  type GenerateContentResponse,
  type GenerationConfig,
  type Tool,
  type ToolConfig,
} from '../../protocols/gemini/generate-content.ts';
import { clientFieldNames, nativeParameters } from '../../catalog/capability-gate.ts';
import { midStreamFailure } from '../../domain/upstream-failure.ts';

/** The gamma (generateContent) request as its schema checked it; unknown fields are kept and forwarded. */
export type GenerateContentBody = GenerateContentRequest;

/** generationConfig field -> native parameter name, for the capability gate. */
const generationFields: Readonly<Record<string, string>> = {
  temperature: 'temperature',
  topP: 'topP',
  topK: 'topK',
  maxOutputTokens: 'maxTokens',
  stopSequences: 'stop',
  seed: 'seed',
  responseMimeType: 'responseFormat',
  responseSchema: 'responseFormat',
  responseJsonSchema: 'responseFormat',
  responseLogprobs: 'logprobs',
  logprobs: 'topLogprobs',
  thinkingConfig: 'thinking',
  presencePenalty: 'presencePenalty',
  frequencyPenalty: 'frequencyPenalty',
};
const topLevelFields: Readonly<Record<string, string>> = { tools: 'tools', toolConfig: 'toolChoice' };

export function gatedParametersOf(body: GenerateContentBody): Record<string, unknown> {
  return { ...nativeParameters(body.generationConfig, generationFields), ...nativeParameters(body, topLevelFields) };
}

/**
 * How the request named its parameters, for refusals and dropped parameters: those inside `generationConfig` with
 * its name; several candidates are asked in `generationConfig.candidateCount`; a schema's strictness (which the
 * protocol holds every schema to) by the schema's field.
 */
export function fieldNamesOfBody(body: GenerateContentBody): Record<string, string> {
  const names: Record<string, string> = {
    ...clientFieldNames(body.generationConfig, generationFields, 'generationConfig.'),
    ...clientFieldNames(body, topLevelFields),
    choices: 'generationConfig.candidateCount',
    strictTools: 'toolConfig.functionCallingConfig.mode',
  };
  return names.responseFormat === undefined ? names : { ...names, structuredOutputs: names.responseFormat };
}

/**
 * The protocol leaves call ids out: calls get ids here, and a response without an id answers the earliest
 * unanswered call of its name.
 */
class CallLedger {
  /** Unanswered calls by id; by name, in order, with answered ones skipped when met (linear in all). */
  private readonly unanswered = new Map<string, ToolCall>();
  private readonly byName = new Map<string, { calls: ToolCall[]; next: number }>();
  private count = 0;

  call(part: FunctionCall): ToolCall {
    const call = {
      id: part.id ?? `call_${this.count++}`,
      name: part.name,
      arguments: JSON.stringify(part.args ?? {}),
    };
    if (!this.unanswered.has(call.id)) this.unanswered.set(call.id, call);
    const named = this.byName.get(call.name) ?? { calls: [], next: 0 };
    named.calls.push(call);
    this.byName.set(call.name, named);
    return call;
  }

  answer(part: FunctionResponse): string {
    if (part.id !== undefined) {
      this.unanswered.delete(part.id);
      return part.id;
    }
    const named = this.byName.get(part.name);
    while (named && named.next < named.calls.length) {
      const call = named.calls[named.next++]!;
      if (this.unanswered.get(call.id) === call && this.unanswered.delete(call.id)) return call.id;
    }
    return `call_${this.count++}`;
  }
}

/**
 * A file by URL is a picture the other protocols fetch when its type says it is one (or says nothing): a PDF, a
 * video or audio by URL has no place in them, and sent as an image it would be refused or misread.
 */
function isImageType(mimeType: string | undefined): boolean {
  return mimeType === undefined || mimeType.startsWith('image/');
}

/**
 * The canonical parts of a content's parts. What the bound does not count is noted: a part of another kind (audio,
 * a document, code the model ran), a thought sent back (the model's own, which other protocols do not take), and
 * a file by a web address of no named type, which is taken for a picture but may be a video (YouTube's address, as
 * clients send it, names no type) read whole, far past a picture's share.
 */
function partsOf(parts: readonly Part[], notes: InputNotes, calls: CallLedger): ChatPart[] {
  const decoded: ChatPart[] = [];
  for (const part of parts) {
    const { inlineData: inline, fileData: file, functionCall, functionResponse } = part;
    if (part.thought === true) {
      notes.uncounted = true;
      continue;
    }
    if (part.text !== undefined) decoded.push({ type: 'text', text: part.text });
    else if (inline?.mimeType.startsWith('image/')) {
      decoded.push({ type: 'image', image: { kind: 'base64', mediaType: inline.mimeType, data: inline.data } });
    } else if (file && /^https?:\/\//.test(file.fileUri) && isImageType(file.mimeType)) {
      decoded.push({ type: 'image', image: { kind: 'url', url: file.fileUri } });
      if (file.mimeType === undefined) notes.uncounted = true;
    } else if (functionCall) decoded.push({ type: 'tool-call', call: calls.call(functionCall) });
    else if (functionResponse) {
      // A multimodal function response's media (`parts`, inline or by file): only a relay carries them, and the
      // bound counts them nowhere.
      if (Object.hasOwn(functionResponse, 'parts')) leftOut(notes, 'functionResponse parts');
      const response = functionResponse.response ?? {};
      const output = JSON.stringify(response);
      // The protocol's failed call: an `error` key without an `output` one.
      const failed = Object.hasOwn(response, 'error') && !Object.hasOwn(response, 'output');
      decoded.push({
        type: 'tool-result',
        result: {
          callId: calls.answer(functionResponse),
          name: functionResponse.name,
          output,
          ...(failed ? { isError: true } : {}),
        },
      });
    } else leftOut(notes, `"${Object.keys(part)[0] ?? 'empty'}" parts`);
  }
  return decoded;
}

/**
 * The function declarations as tool definitions; `strict` when the calling mode is VALIDATED, the protocol's way
 * to hold every call to its declaration's schema (other protocols say so of each tool), where the schema is one
 * the others can hold strictly (closed, every property required). Where it is not, the mode is named as what a
 * translated call goes without.
 */
function decodeTools(
  tools: readonly Tool[] | undefined,
  {
    validated,
    untranslatable,
    notTranslated,
  }: { validated: boolean; untranslatable: Set<string>; notTranslated: Set<string> },
): ToolDefinition[] | undefined {
  if (tools === undefined) return undefined;
  const definitions: ToolDefinition[] = [];
  for (const [toolIndex, tool] of tools.entries()) {
    for (const other of Object.keys(tool).filter((key) => key !== 'functionDeclarations'))
      untranslatable.add(`"${other}" tools`);
    for (const [index, declaration] of (tool.functionDeclarations ?? []).entries()) {
      // jsonSchemaOf walks the schema by recursion, which the bound keeps shallow.
      for (const field of ['parameters', 'parametersJsonSchema'] as const)
        requireNestingWithin(declaration[field], `body.tools.${toolIndex}.functionDeclarations.${index}.${field}`);
      const dropped = new Set<string>();
      const parameters =
        declaration.parametersJsonSchema ??
        (declaration.parameters === undefined ? undefined : jsonSchemaOf(declaration.parameters, dropped));
      for (const keyword of dropped) notTranslated.add(`tools.functionDeclarations.parameters.${keyword}`);
      // VALIDATED holds calls to their schemas: each serving protocol says whether it can (`strictTools`).
      const strict = validated && parameters !== undefined;
      definitions.push(
        toolDefinition({
          name: declaration.name,
          description: declaration.description,
          parameters,
          ...(strict ? { strict } : {}),
        }),
      );
    }
  }
  return definitions;
}

function decodeToolConfig(toolConfig: ToolConfig | undefined, untranslatable: Set<string>): ToolChoice | undefined {
  const config = toolConfig?.functionCallingConfig;
  if (config === undefined) return undefined;
  const allowed = config.allowedFunctionNames ?? [];
  // An unspecified mode is the protocol's default, AUTO; VALIDATED is AUTO with every call held to its schema.
  if (
    config.mode === undefined ||
    config.mode === 'AUTO' ||
    config.mode === 'MODE_UNSPECIFIED' ||
    config.mode === 'VALIDATED'
  )
    return allowed.length === 0 ? 'auto' : restricted(untranslatable);
  if (config.mode === 'NONE') return 'none';
  if (config.mode === 'ANY' && allowed.length === 0) return 'required';
  if (config.mode === 'ANY' && allowed[0] !== undefined && allowed.length === 1) return { name: allowed[0] };
  return restricted(untranslatable);
}

function restricted(untranslatable: Set<string>): undefined {
  untranslatable.add('this functionCallingConfig');
  return undefined;
}

/** What decoding the request's settings notes: what only a relay carries, and what a translation goes without. */
interface FormatNotes {
  untranslatable: Set<string>;
  notTranslated: Set<string>;
}

/**
 * A JSON answer with its schema (JSON Schema, or the protocol's OpenAPI subset), or plain text. An answer of another kind (`text/x.enum`, one of the schema's values as
 * plain text) has no counterpart in the other protocols: the request is the protocol's own to relay.
 */
function decodeGenerationFormat(
  config: GenerationConfig,
  { untranslatable, notTranslated }: FormatNotes,
): ResponseFormat | undefined {
  // Converted and translated by recursion: within the nesting the other protocols' schemas are held to.
  requireNestingWithin(config.responseJsonSchema, 'body.generationConfig.responseJsonSchema');
  requireNestingWithin(config.responseSchema, 'body.generationConfig.responseSchema');
  const dropped = new Set<string>();
  const schema =
    config.responseJsonSchema ??
    (config.responseSchema === undefined ? undefined : jsonSchemaOf(config.responseSchema, dropped));
  for (const keyword of dropped) notTranslated.add(`generationConfig.responseSchema.${keyword}`);
  if (config.responseMimeType === 'text/plain' && schema === undefined) return { type: 'text' };
  if (config.responseMimeType === 'application/json')
    return schema === undefined ? { type: 'json_object' } : { type: 'json_schema', name: unnamedFormat, schema };
  if (config.responseMimeType !== undefined && config.responseMimeType !== 'text/plain')
    untranslatable.add(`responseMimeType "${config.responseMimeType}"`);
  else if (schema !== undefined) untranslatable.add('a response schema without responseMimeType "application/json"');
  return undefined;
}

/** A thinking budget: 0 is thinking off; the protocol's dynamic budget (-1) has no counterpart elsewhere. */
function decodeThinking(config: GenerationConfig): ThinkingConfig | undefined {
  const budget = config.thinkingConfig?.thinkingBudget;
  if (budget === 0) return { type: 'disabled' };
  return budget !== undefined && budget > 0 ? { type: 'enabled', budgetTokens: budget } : undefined;
}

/** The generationConfig fields beyond the basics, so they reach an upstream of another protocol too. */
function decodeParameters(
  config: GenerationConfig,
  notes: FormatNotes,
): Omit<Partial<ChatRequest>, 'upstreamModel' | 'messages'> {
  return {
    topK: config.topK,
    seed: config.seed,
    presencePenalty: config.presencePenalty,
    frequencyPenalty: config.frequencyPenalty,
    logprobs: config.responseLogprobs,
    topLogprobs: config.logprobs,
    ...heldFormat(decodeGenerationFormat(config, notes)),
    thinking: decodeThinking(config),
  };
}

export function decodeContents(body: GenerateContentBody): DecodedChat {
  const notes = newInputNotes();
  const { untranslatable } = notes;
  const calls = new CallLedger();
  const messages: ChatMessage[] = [];
  // Function calls and responses hold JSON of any depth, which is serialised by recursion.
  requireNestingWithin(body.systemInstruction, 'body.systemInstruction');
  if (body.systemInstruction !== undefined) {
    // Parts stay parts, so that a protocol taking a system prompt in parts gets them as the client wrote them.
    // The other protocols' system prompts are text only: another part has no place there.
    const parts =
      typeof body.systemInstruction === 'string'
        ? [{ type: 'text' as const, text: body.systemInstruction }]
        : partsOf(body.systemInstruction.parts, notes, calls);
    if (parts.some((part) => part.type !== 'text')) untranslatable.add('systemInstruction parts other than text');
    messages.push({ role: 'system', content: contentInParts(parts) });
  }
  if (typeof body.contents === 'string') messages.push({ role: 'user', content: body.contents });
  else {
    // Model contents in a row are one turn: the SDK keeps each streamed chunk as a content of its own (a call,
    // then the last chunk's empty text), where other protocols want one assistant message for the turn.
    let modelTurn: ChatPart[] | undefined;
    const endModelTurn = () => {
      if (modelTurn) messages.push({ role: 'assistant', content: compactContent(modelTurn) });
      modelTurn = undefined;
    };
    for (const [index, content] of body.contents.entries()) {
      requireNestingWithin(content.parts, `body.contents.${index}.parts`);
      const parts = partsOf(content.parts, notes, calls);
      if (content.role === 'model') {
        modelTurn ??= [];
        for (const part of parts) modelTurn.push(part);
        continue;
      }
      endModelTurn();
      messages.push(...userTurn(parts));
    }
    endModelTurn();
  }
  // An empty list of safety settings asks for nothing (LangChain's Gemini client always sends one): it blocks no upstream.
  if (body.safetySettings !== undefined && body.safetySettings.length > 0) untranslatable.add('safetySettings');
  if (body.cachedContent !== undefined) untranslatable.add('cachedContent');
  const notTranslated = new Set<string>();
  const tools = decodeTools(body.tools, {
    validated: body.toolConfig?.functionCallingConfig?.mode === 'VALIDATED',
    untranslatable,
    notTranslated,
  });
  const toolChoice = decodeToolConfig(body.toolConfig, untranslatable);
  return {
    messages,
    ...decodeParameters(body.generationConfig ?? {}, { untranslatable, notTranslated }),
    ...(tools ? { tools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    untranslatable: [...untranslatable],
    uncountedInput: notes.uncounted,
    ...(notTranslated.size > 0 ? { notTranslated: [...notTranslated] } : {}),
  };
}

/**
 * The body for an upstream of this protocol: as given, except that the string shorthands this surface
 * accepts for `contents` and `systemInstruction` are written out in the protocol's own object form.
 */
export function relayBody(
  body: GenerateContentBody,
  droppedNativeNames: readonly string[],
  maxOutputTokens: number,
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body };
  if (typeof body.contents === 'string') forwarded.contents = [{ role: 'user', parts: [{ text: body.contents }] }];
  if (typeof body.systemInstruction === 'string')
    forwarded.systemInstruction = { parts: [{ text: body.systemInstruction }] };
  const config: Record<string, unknown> = { ...body.generationConfig };
  for (const [field, native] of Object.entries(generationFields))
    if (droppedNativeNames.includes(native)) delete config[field];
  // The limit the reservation covers, whether or not the client set one.
  config.maxOutputTokens = maxOutputTokens;
  forwarded.generationConfig = config;
  for (const [field, native] of Object.entries(topLevelFields))
    if (droppedNativeNames.includes(native)) delete forwarded[field];
  return forwarded;
}

const functionCallPart = (call: ToolCall): Part => ({
  functionCall: { id: call.id, name: call.name, args: argumentsObject(call.arguments) },
});

/**
 * Streamed GenerateContentResponse chunks for canonical events, each candidate (several with `candidateCount`)
 * under its index. The protocol sends each function call whole, so a candidate's calls are held, each gathering
 * its own argument fragments by the call's index (a server may interleave parallel calls' fragments), until the
 * candidate says something else or ends; then each goes as a chunk, in the order the calls opened.
 */
export class ChunkEncoder {
  /** The calls each candidate is making, by candidate index, then by call index. */
  private readonly pending = new Map<number, Map<number, ToolCall>>();
  /** Log probabilities of each candidate's next output, sent with its chunk as the protocol does. */
  private readonly logprobs = new Map<number, TokenLogprob[]>();

  constructor(private readonly model: string) {}

  encode(event: ChatStreamEvent): GenerateContentResponse[] {
    switch (event.type) {
      case 'logprobs': {
        const held = this.logprobs.get(event.choice ?? 0);
        if (held) for (const token of event.tokens) held.push(token);
        else this.logprobs.set(event.choice ?? 0, [...event.tokens]);
        return [];
      }
      case 'tool-call-delta': {
        const call = this.pending.get(event.choice ?? 0)?.get(event.index);
        if (call) call.arguments += event.arguments;
        return [];
      }
      case 'tool-call-start': {
        const choice = event.choice ?? 0;
        const calls = this.pending.get(choice) ?? new Map<number, ToolCall>();
        this.pending.set(choice, calls);
        calls.set(event.index, { id: event.id, name: event.name, arguments: '' });
        return [];
      }
      case 'text-delta':
        return [...this.flush(event.choice ?? 0), this.chunk(event.choice ?? 0, [{ text: event.text }])];
      case 'choice-finish':
        return [...this.flush(event.choice), this.chunk(event.choice, [{ text: '' }], event.finishReason)];
      case 'finish':
        return [
          ...[...this.pending.keys()].flatMap((choice) => this.flush(choice)),
          {
            ...this.chunk(0, [{ text: '' }], event.finishReason),
            ...(event.usage ? { usageMetadata: wireUsageMetadata(event.usage) } : {}),
          },
        ];
    }
  }

  private flush(choice: number): GenerateContentResponse[] {
    const calls = this.pending.get(choice);
    this.pending.delete(choice);
    return calls ? [...calls.values()].map((call) => this.chunk(choice, [functionCallPart(call)])) : [];
  }

  private chunk(index: number, parts: Part[], finish?: FinishReason): GenerateContentResponse {
    const logprobs = this.logprobs.get(index);
    this.logprobs.delete(index);
    const candidate = {
      content: { role: 'model', parts },
      ...(finish ? { finishReason: wireFinishReasons[finish.unified] } : {}),
      index,
      ...(logprobs ? { logprobsResult: wireLogprobsResult(logprobs) } : {}),
    };
    return { candidates: [candidate], modelVersion: this.model };
  }
}

/** One candidate of a whole answer: the text, then a functionCall part per call. */
function candidateOf(
  { text, toolCalls, logprobs }: CollectedChoice,
  finish: FinishReason | undefined,
  index: number,
): Candidate {
  const parts = [...(text !== '' || toolCalls.length === 0 ? [{ text }] : []), ...toolCalls.map(functionCallPart)];
  return {
    content: { role: 'model', parts },
    finishReason: wireFinishReasons[finish?.unified ?? 'other'],
    index,
    ...(logprobs ? { logprobsResult: wireLogprobsResult(logprobs) } : {}),
  };
}

/** A whole GenerateContentResponse from a collected answer: a candidate per completion. */
export function responseOf(model: string, answer: CollectedAnswer): GenerateContentResponse {
  const { finish, alternatives } = answer;
  return {
    candidates: [
      candidateOf(answer, finish?.finishReason, 0),
      ...alternatives.map((choice, index) => candidateOf(choice, choice.finishReason, index + 1)),
    ],
    ...(finish?.usage ? { usageMetadata: wireUsageMetadata(finish.usage) } : {}),
    modelVersion: model,
  };
}

/** What a translated stream sends when the upstream fails mid-way: the protocol's own error object. */
export const streamError: GeminiError = { error: { code: 502, message: midStreamFailure, status: 'UNAVAILABLE' } };
