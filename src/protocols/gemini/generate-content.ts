import { Type, type Static } from 'typebox';
import {
  logprobOf,
  tokenSum,
  usageDetails,
  type FinishReason,
  type TokenChance,
  type TokenLogprob,
  type TokenUsage,
} from '../../domain/chat.ts';
import { objectWithOneOf, wireCheck } from '../wire-check.ts';
import { AnswerContent, Content, JsonObject, Part } from './content.ts';

/** A function the model may call, its parameters in the API's OpenAPI subset or as JSON Schema (not both). */
export const FunctionDeclaration = Type.Object({
  name: Type.String(),
  description: Type.Optional(Type.String()),
  parameters: Type.Optional(JsonObject),
  parametersJsonSchema: Type.Optional(JsonObject),
});
export type FunctionDeclaration = Static<typeof FunctionDeclaration>;

/** A tool: function declarations, or one of the API's own tools, which are passed through as given. */
export const Tool = Type.Object({
  functionDeclarations: Type.Optional(Type.Array(FunctionDeclaration)),
  googleSearch: Type.Optional(JsonObject),
  googleSearchRetrieval: Type.Optional(JsonObject),
  codeExecution: Type.Optional(JsonObject),
  urlContext: Type.Optional(JsonObject),
});
export type Tool = Static<typeof Tool>;

/** How the model may call functions: AUTO (it chooses), ANY (it must, among `allowedFunctionNames` if given), NONE. */
export const ToolConfig = Type.Object({
  functionCallingConfig: Type.Optional(
    Type.Object({
      mode: Type.Optional(
        Type.Union([
          Type.Literal('MODE_UNSPECIFIED'),
          Type.Literal('AUTO'),
          Type.Literal('ANY'),
          Type.Literal('NONE'),
          Type.Literal('VALIDATED'),
        ]),
      ),
      allowedFunctionNames: Type.Optional(Type.Array(Type.String())),
    }),
  ),
});
export type ToolConfig = Static<typeof ToolConfig>;

/** A blocking threshold for one harm category (the API's names, which grow, are not listed here). */
export const SafetySetting = Type.Object({ category: Type.String(), threshold: Type.String() });

/** A thinking budget in tokens (0 off, -1 dynamic), or a thinking level; whether thoughts are returned. */
export const ThinkingConfig = Type.Object({
  includeThoughts: Type.Optional(Type.Boolean()),
  thinkingBudget: Type.Optional(Type.Integer()),
  thinkingLevel: Type.Optional(Type.String()),
});

export const GenerationConfig = Type.Object({
  temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
  topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
  topK: Type.Optional(Type.Integer({ minimum: 1 })),
  maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
  stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
  candidateCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 8 })),
  seed: Type.Optional(Type.Integer()),
  presencePenalty: Type.Optional(Type.Number()),
  frequencyPenalty: Type.Optional(Type.Number()),
  responseLogprobs: Type.Optional(Type.Boolean()),
  logprobs: Type.Optional(Type.Integer({ minimum: 0 })),
  responseMimeType: Type.Optional(Type.String()),
  responseSchema: Type.Optional(JsonObject),
  responseJsonSchema: Type.Optional(JsonObject),
  responseModalities: Type.Optional(Type.Array(Type.String())),
  thinkingConfig: Type.Optional(ThinkingConfig),
});
export type GenerationConfig = Static<typeof GenerationConfig>;

/** A generateContent request as clients send it; unnamed fields are kept and forwarded. */
export const GenerateContentRequest = Type.Object(
  {
    contents: Type.Union([Type.String({ minLength: 1 }), Type.Array(Content, { minItems: 1 })]),
    systemInstruction: Type.Optional(
      Type.Union([Type.String(), Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(Part) })]),
    ),
    generationConfig: Type.Optional(GenerationConfig),
    safetySettings: Type.Optional(Type.Array(SafetySetting)),
    tools: Type.Optional(Type.Array(Tool)),
    toolConfig: Type.Optional(ToolConfig),
    cachedContent: Type.Optional(Type.String()),
  },
  { additionalProperties: true },
);
export type GenerateContentRequest = Static<typeof GenerateContentRequest>;

/** countTokens: the contents, or a whole generateContent request under `generateContentRequest` (the older SDK's form). */
export const CountTokensRequest = Type.Object(
  {
    contents: Type.Optional(GenerateContentRequest.properties.contents),
    generateContentRequest: Type.Optional(GenerateContentRequest),
  },
  { additionalProperties: true },
);
export type CountTokensRequest = Static<typeof CountTokensRequest>;

export const CountTokensResponse = Type.Object({ totalTokens: Type.Integer({ minimum: 0 }) });

/** A model as the protocol describes it (`GET models/{model}`, and each item of its list). */
export const GeminiModel = Type.Object({
  name: Type.String({ description: '`models/` and the catalog id' }),
  version: Type.String(),
  displayName: Type.String(),
  outputTokenLimit: Type.Optional(Type.Integer()),
  supportedGenerationMethods: Type.Array(Type.String()),
});

export const UsageMetadata = Type.Object({
  promptTokenCount: Type.Optional(Type.Number()),
  candidatesTokenCount: Type.Optional(Type.Number()),
  thoughtsTokenCount: Type.Optional(Type.Number()),
  toolUsePromptTokenCount: Type.Optional(Type.Number()),
  cachedContentTokenCount: Type.Optional(Type.Number()),
  totalTokenCount: Type.Optional(Type.Number()),
});
export type UsageMetadata = Static<typeof UsageMetadata>;

/** Why the prompt was blocked (an answer without candidates), and its ratings. */
export const PromptFeedback = Type.Object({
  blockReason: Type.Optional(Type.String()),
  blockReasonMessage: Type.Optional(Type.String()),
  safetyRatings: Type.Optional(Type.Array(JsonObject)),
});

/** A token and its log probability; as JSON of the API's messages, a field at its default (0, "") is left out. */
const LogprobsCandidate = Type.Object({
  token: Type.Optional(Type.String()),
  tokenId: Type.Optional(Type.Integer()),
  logProbability: Type.Optional(Type.Number()),
});
type LogprobsCandidate = Static<typeof LogprobsCandidate>;

/** The log probabilities of a candidate's tokens (asked for with `responseLogprobs`): a place per token chosen. */
export const LogprobsResult = Type.Object({
  chosenCandidates: Type.Optional(Type.Array(LogprobsCandidate)),
  /** At each place, the likeliest tokens (as many as `logprobs` asked). */
  topCandidates: Type.Optional(Type.Array(Type.Object({ candidates: Type.Optional(Type.Array(LogprobsCandidate)) }))),
});
export type LogprobsResult = Static<typeof LogprobsResult>;

const chanceOf = ({ token, logProbability }: LogprobsCandidate): TokenChance => ({
  token: token ?? '',
  logprob: logprobOf(logProbability ?? 0),
});

export function tokenLogprobsOf(result: LogprobsResult): TokenLogprob[] {
  const top = result.topCandidates ?? [];
  return (result.chosenCandidates ?? []).map((chosen, place) => ({
    ...chanceOf(chosen),
    top: (top[place]?.candidates ?? []).map(chanceOf),
  }));
}

export function wireLogprobsResult(tokens: readonly TokenLogprob[]): LogprobsResult {
  const candidate = ({ token, logprob }: TokenChance): LogprobsCandidate => ({ token, logProbability: logprob });
  return {
    chosenCandidates: tokens.map(candidate),
    ...(tokens.some((entry) => entry.top.length > 0)
      ? { topCandidates: tokens.map((entry) => ({ candidates: entry.top.map(candidate) })) }
      : {}),
  };
}

/** One answer of the model; its other fields (safety ratings, citations, grounding) are passed through. */
export const Candidate = Type.Object({
  content: Type.Optional(AnswerContent),
  finishReason: Type.Optional(Type.String()),
  finishMessage: Type.Optional(Type.String()),
  index: Type.Optional(Type.Integer({ minimum: 0 })),
  logprobsResult: Type.Optional(LogprobsResult),
});
export type Candidate = Static<typeof Candidate>;

/**
 * A generateContent answer, and each chunk of a stream (the same shape). A blocked prompt has no candidates,
 * only promptFeedback; some object the protocol names must be there.
 */
export const GenerateContentResponse = objectWithOneOf(
  {
    candidates: Type.Optional(Type.Array(Candidate)),
    usageMetadata: Type.Optional(UsageMetadata),
    modelVersion: Type.Optional(Type.String()),
    responseId: Type.Optional(Type.String()),
    promptFeedback: Type.Optional(PromptFeedback),
    error: Type.Optional(Type.Object({ code: Type.Optional(Type.Integer()), message: Type.Optional(Type.String()) })),
  },
  ['candidates', 'usageMetadata', 'promptFeedback', 'error'],
);
export type GenerateContentResponse = Static<typeof GenerateContentResponse>;
export const isGenerateContentResponse = wireCheck(GenerateContentResponse);

/** The protocol's error body. */
export const GeminiError = Type.Object({
  error: Type.Object({ code: Type.Integer(), message: Type.String(), status: Type.String() }),
});
export type GeminiError = Static<typeof GeminiError>;

/**
 * Google's FinishReason read as the canonical finish. The IMAGE_* reasons are the image made and then withheld
 * (IMAGE_OTHER: "for a reason not otherwise specified"), a content filter's finish as their text counterparts;
 * NO_IMAGE is a model that made no image where one was expected, a failure as a malformed call is.
 */
const finishReasons: Readonly<Record<string, FinishReason['unified']>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  IMAGE_SAFETY: 'content-filter',
  IMAGE_PROHIBITED_CONTENT: 'content-filter',
  IMAGE_RECITATION: 'content-filter',
  IMAGE_OTHER: 'content-filter',
  NO_IMAGE: 'error',
  MALFORMED_FUNCTION_CALL: 'error',
  UNEXPECTED_TOOL_CALL: 'error',
  TOO_MANY_TOOL_CALLS: 'error',
};

/** The protocol ends a turn of calls with STOP; other protocols name that finish, so it is named here. */
export function finishReasonOf(raw: string, { madeCalls }: { madeCalls: boolean }): FinishReason {
  return { unified: madeCalls && raw === 'STOP' ? 'tool-calls' : (finishReasons[raw] ?? 'other'), raw };
}

/**
 * A blocked prompt ends the answer without candidates: `promptFeedback.blockReason` is its finish (a content
 * filter's, whatever the reason).
 */
export function blockedPromptFinish(chunk: GenerateContentResponse): FinishReason | undefined {
  const reason = chunk.promptFeedback?.blockReason;
  return reason ? { unified: 'content-filter', raw: reason } : undefined;
}

export const wireFinishReasons: Readonly<Record<FinishReason['unified'], string>> = {
  stop: 'STOP',
  length: 'MAX_TOKENS',
  'content-filter': 'SAFETY',
  'tool-calls': 'STOP',
  error: 'OTHER',
  other: 'OTHER',
};

/** Billed tokens of a usageMetadata: thinking and tool-use prompt tokens are counted with output and input. */
export function usageFromMetadata(metadata: UsageMetadata): TokenUsage {
  return {
    inputTokens: tokenSum([metadata.promptTokenCount, metadata.toolUsePromptTokenCount]),
    outputTokens: tokenSum([metadata.candidatesTokenCount, metadata.thoughtsTokenCount]),
    ...usageDetails(metadata.cachedContentTokenCount, metadata.thoughtsTokenCount),
  };
}

/** The protocol counts thinking apart from the candidates' tokens. */
export const wireUsageMetadata = (usage: TokenUsage | undefined) =>
  usage && {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: usage.outputTokens - Math.min(usage.reasoningTokens ?? 0, usage.outputTokens),
    ...(usage.reasoningTokens ? { thoughtsTokenCount: Math.min(usage.reasoningTokens, usage.outputTokens) } : {}),
    ...(usage.cachedInputTokens ? { cachedContentTokenCount: usage.cachedInputTokens } : {}),
    totalTokenCount: usage.inputTokens + usage.outputTokens,
  };

/**
 * The API's own tools that read what they retrieve into the model's input (billed as `toolUsePromptTokenCount`):
 * Google Search (and its older retrieval form), Google Maps, URL context, and search in the client's file stores.
 */
const retrievalTools = ['googleSearch', 'googleSearchRetrieval', 'googleMaps', 'urlContext', 'fileSearch'] as const;
const isToolList = wireCheck(Type.Array(JsonObject));

/**
 * Whether a generateContent request, as it is forwarded, makes its upstream read input the request only names,
 * which no prompt bound can count: cached content (held by the server, named), or what a retrieval tool finds.
 * What the parts carry is their decoder's to say (DecodedChat.uncountedInput).
 */
export function generateContentReadsServerInput(body: Readonly<Record<string, unknown>>): boolean {
  if (body.cachedContent !== undefined && body.cachedContent !== null) return true;
  const { tools } = body;
  return isToolList(tools) && tools.some((tool) => retrievalTools.some((name) => Object.hasOwn(tool, name)));
}
