import {
  argumentsObject,
  argumentsSchema,
  choiceField,
  describedSchema,
  systemTexts,
  type ChatMessage,
  type ChatParameterName,
  type ChatPart,
  type ChatRequest,
  type ChatStreamEvent,
  type FinishReason,
  type ResponseFormat,
  type TokenUsage,
  type ToolChoice,
  type ToolResult,
} from '../../domain/chat.ts';
import { newId } from '../../domain/ids.ts';
import { UpstreamUnreachableError } from '../../domain/upstream-failure.ts';
import {
  signsCallTurns,
  unsignedTurnSignature,
  type Content,
  type JsonObject,
  type Part,
} from '../../protocols/gemini/content.ts';
import {
  blockedPromptFinish,
  finishReasonOf,
  isGenerateContentResponse,
  tokenLogprobsOf,
  usageFromMetadata,
  type GenerateContentRequest,
  type GenerationConfig,
  type ToolConfig,
} from '../../protocols/gemini/generate-content.ts';
import type { CallOptions } from '../provider-adapter.ts';
import { decodeSse } from '../shared/sse-decoder.ts';
import { callOfId, signedCallId } from '../../domain/call-ids.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { askedChoice, checkedEvent } from '../shared/wire-data.ts';

export function geminiPath(upstreamModel: string, action: string): string {
  return `/models/${encodeURIComponent(upstreamModel)}:${action}`;
}

/** Media type of an image fetched by URL, from its file name; the protocol requires one. */
function mediaTypeOfUrl(url: string): string {
  const extension = /\.(png|jpe?g|webp|gif|heic|heif)(?:[?#]|$)/i.exec(url)?.[1]?.toLowerCase();
  return extension === 'jpg' || extension === undefined ? 'image/jpeg' : `image/${extension}`;
}

/** The protocol's function response is an object: a JSON object output as itself, anything else wrapped. */
function functionResponse(result: ToolResult): JsonObject {
  const output = argumentsObject(result.output);
  const whole = Object.keys(output).length > 0 || result.output.trim() === '{}';
  if (result.isError) return { error: whole ? output : result.output };
  return whole ? output : { result: result.output };
}

function geminiPart(part: ChatPart): Part {
  switch (part.type) {
    case 'text':
      return { text: part.text };
    case 'image':
      return part.image.kind === 'base64'
        ? { inlineData: { mimeType: part.image.mediaType, data: part.image.data } }
        : { fileData: { mimeType: mediaTypeOfUrl(part.image.url), fileUri: part.image.url } };
    case 'tool-call': {
      const { signature } = callOfId(part.call.id);
      return {
        functionCall: { name: part.call.name, args: argumentsObject(part.call.arguments) },
        ...(signature === undefined ? {} : { thoughtSignature: signature }),
      };
    }
    case 'tool-result':
      return { functionResponse: { name: part.result.name, response: functionResponse(part.result) } };
  }
}

function geminiParts(content: ChatMessage['content']): Part[] {
  if (typeof content === 'string') return [{ text: content }];
  return content.map(geminiPart);
}

/**
 * The conversation as `user` and `model` turns; tool results go in a user turn, merged with adjacent user parts.
 * For a model that refuses an unsigned turn of calls, a turn of calls that comes without its signature (made by
 * another model, or by a client that kept no id) carries Google's stand-in on its first call.
 */
function geminiContents(messages: readonly ChatMessage[], { signedTurns }: { signedTurns: boolean }): Content[] {
  const turns: Content[] = [];
  for (const message of messages) {
    if (message.role === 'system') continue;
    const role = message.role === 'assistant' ? 'model' : 'user';
    const previous = turns.at(-1);
    if (previous?.role === role) previous.parts.push(...geminiParts(message.content));
    else turns.push({ role, parts: geminiParts(message.content) });
  }
  if (!signedTurns) return turns;
  for (const turn of turns) {
    const calls = turn.parts.filter((part) => part.functionCall !== undefined);
    if (turn.role === 'model' && calls.length > 0 && !calls.some((part) => part.thoughtSignature !== undefined))
      calls[0]!.thoughtSignature = unsignedTurnSignature;
  }
  return turns;
}

const callingModes = { auto: 'AUTO', none: 'NONE', required: 'ANY' } as const;

/**
 * The calling mode of a tool choice. The protocol holds calls to their schemas for all functions at once: in
 * ANY mode always, in AUTO mode only as VALIDATED, which a strict tool asks for (other protocols mark each tool).
 */
function functionCallingConfig(choice: ToolChoice, strict: boolean): ToolConfig['functionCallingConfig'] {
  if (typeof choice === 'object') return { mode: 'ANY', allowedFunctionNames: [choice.name] };
  return { mode: strict && choice === 'auto' ? 'VALIDATED' : callingModes[choice] };
}

const geminiParameters = new Set<ChatParameterName>([
  'maxTokens',
  'temperature',
  'topP',
  'stop',
  'seed',
  'tools',
  'toolChoice',
  'topK',
  'presencePenalty',
  'frequencyPenalty',
  'logprobs',
  'topLogprobs',
  'responseFormat',
  'thinking',
  'choices',
]);

/** Reasoning efforts the protocol has a thinking level for; `none` is a thinking budget of 0. */
const thinkingLevels = new Set(['minimal', 'low', 'medium', 'high']);

export function geminiCarries(name: ChatParameterName, request: ChatRequest): boolean {
  // One thinkingConfig holds either: an explicit thinking budget wins over an effort.
  if (name === 'reasoningEffort')
    return (
      request.thinking === undefined &&
      (request.reasoningEffort === 'none' || thinkingLevels.has(request.reasoningEffort ?? ''))
    );
  // A strict tool's calls are held to its schema (VALIDATED, or ANY mode).
  if (name === 'strictTools') return true;
  // A response JSON schema constrains the answer to it: strict, as structured outputs ask.
  if (name === 'structuredOutputs')
    return request.responseFormat?.type === 'json_schema' && request.responseFormat.schema !== undefined;
  return geminiParameters.has(name);
}

function thinkingConfig({ thinking, reasoningEffort }: ChatRequest): GenerationConfig['thinkingConfig'] {
  if (thinking !== undefined) return { thinkingBudget: thinking.type === 'enabled' ? thinking.budgetTokens : 0 };
  if (reasoningEffort === 'none') return { thinkingBudget: 0 };
  return reasoningEffort !== undefined && thinkingLevels.has(reasoningEffort)
    ? { thinkingLevel: reasoningEffort.toUpperCase() }
    : undefined;
}

/** The answer format as a MIME type, with the JSON Schema as given (`responseSchema` takes only an OpenAPI subset). */
function responseFormatConfig(format: ResponseFormat): GenerationConfig {
  if (format.type === 'text') return { responseMimeType: 'text/plain' };
  return {
    responseMimeType: 'application/json',
    ...(format.type === 'json_schema' && format.schema !== undefined
      ? { responseJsonSchema: describedSchema(format) }
      : {}),
  };
}

export function encodeGenerateContent(request: ChatRequest): GenerateContentRequest {
  const system = systemTexts(request.messages);
  // Unset fields are undefined, which the JSON of the body leaves out.
  const generationConfig: GenerationConfig = {
    maxOutputTokens: request.maxTokens,
    temperature: request.temperature,
    topP: request.topP,
    stopSequences: request.stop && [...request.stop],
    seed: request.seed,
    candidateCount: request.choices !== undefined && request.choices > 1 ? request.choices : undefined,
    topK: request.topK,
    presencePenalty: request.presencePenalty,
    frequencyPenalty: request.frequencyPenalty,
    responseLogprobs: request.logprobs,
    logprobs: request.topLogprobs,
    thinkingConfig: thinkingConfig(request),
    ...(request.responseFormat !== undefined ? responseFormatConfig(request.responseFormat) : {}),
  };
  const declarations = request.tools?.map((tool) => ({
    name: tool.name,
    ...(tool.description !== undefined ? { description: tool.description } : {}),
    // JSON Schema as given (an object's, typed so): the protocol's `parameters` takes only its OpenAPI subset.
    ...(tool.parameters !== undefined ? { parametersJsonSchema: argumentsSchema(tool.parameters) } : {}),
  }));
  const strict = request.tools?.some((tool) => tool.strict === true) === true;
  const choice = request.toolChoice ?? (strict ? 'auto' : undefined);
  return {
    contents: geminiContents(request.messages, { signedTurns: signsCallTurns(request.upstreamModel) }),
    // A system prompt in parts goes as parts, one a part.
    ...(system.length > 0 ? { systemInstruction: { parts: system.map((text) => ({ text })) } } : {}),
    ...(Object.values(generationConfig).some((value) => value !== undefined) ? { generationConfig } : {}),
    ...(declarations ? { tools: [{ functionDeclarations: declarations }] } : {}),
    ...(choice !== undefined ? { toolConfig: { functionCallingConfig: functionCallingConfig(choice, strict) } } : {}),
  };
}

/** streamGenerateContent over SSE into canonical events; the last usageMetadata seen is the final one. */
export async function* streamGeminiContent(
  http: UpstreamHttp,
  request: ChatRequest,
  options: CallOptions,
): AsyncGenerator<ChatStreamEvent> {
  const response = await http.postJson(options.target, {
    path: `${geminiPath(request.upstreamModel, 'streamGenerateContent')}?alt=sse`,
    headers: { 'x-goog-api-key': options.target.apiKey },
    body: encodeGenerateContent(request),
  });
  let usage: TokenUsage | undefined;
  let finish: FinishReason | undefined;
  // Calls made so far by each candidate (several with `candidateCount`), which number its calls.
  const calls: number[] = [];
  for await (const event of decodeSse(response.body, options.target.maxEventCharacters)) {
    const chunk = checkedEvent(event.data, isGenerateContentResponse);
    if (chunk.error)
      throw new UpstreamUnreachableError(
        'protocol',
        `the upstream reported an error mid-stream: ${chunk.error.message ?? 'unknown'}`,
      );
    for (const [position, candidate] of (chunk.candidates ?? []).entries()) {
      const choice = askedChoice(candidate.index ?? position, request.choices);
      const number = choiceField(choice);
      // Before the output they describe, so a surface can send them with it.
      const tokens = candidate.logprobsResult ? tokenLogprobsOf(candidate.logprobsResult) : [];
      if (tokens.length > 0) yield { type: 'logprobs', tokens, ...number };
      for (const part of candidate.content?.parts ?? []) {
        if (part.text && !part.thought) yield { type: 'text-delta', text: part.text, ...number };
        if (part.functionCall) {
          // Calls arrive whole: one start and all of the arguments at once.
          const index = calls[choice] ?? 0;
          calls[choice] = index + 1;
          // The turn's signature rides in the id, to come back with the call (domain/call-ids.ts).
          const id = signedCallId(part.functionCall.id ?? newId('call'), part.thoughtSignature);
          yield { type: 'tool-call-start', index, id, name: part.functionCall.name, ...number };
          yield { type: 'tool-call-delta', index, arguments: JSON.stringify(part.functionCall.args ?? {}), ...number };
        }
      }
      if (!candidate.finishReason) continue;
      const reason = finishReasonOf(candidate.finishReason, { madeCalls: (calls[choice] ?? 0) > 0 });
      if (number.choice === undefined) finish = reason;
      else yield { type: 'choice-finish', choice: number.choice, finishReason: reason };
    }
    finish = blockedPromptFinish(chunk) ?? finish;
    if (chunk.usageMetadata) usage = usageFromMetadata(chunk.usageMetadata);
  }
  // The protocol has no terminator: a stream that closes after a finishReason is complete, otherwise it was cut.
  if (!finish) throw new UpstreamUnreachableError('protocol', 'the upstream stream ended before it was complete');
  yield { type: 'finish', finishReason: finish, usage };
}
