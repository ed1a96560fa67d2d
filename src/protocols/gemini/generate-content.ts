import { Type, type Static } from 'typebox';
import type { FinishReason, TokenUsage } from '../../domain/chat.ts';
import { objectWithOneOf, wireCheck } from '../wire-check.ts';

const RequestPart = Type.Object({ text: Type.Optional(Type.String()) });

/** A generateContent request as clients send it; unnamed fields are kept and forwarded. */
export const GenerateContentRequest = Type.Object(
  {
    contents: Type.Union([
      Type.String({ minLength: 1 }),
      Type.Array(Type.Object({ role: Type.Optional(Type.String()), parts: Type.Array(RequestPart, { minItems: 1 }) }), {
        minItems: 1,
      }),
    ]),
    systemInstruction: Type.Optional(Type.Union([Type.String(), Type.Object({ parts: Type.Array(RequestPart) })])),
    generationConfig: Type.Optional(
      Type.Object({
        temperature: Type.Optional(Type.Number({ minimum: 0, maximum: 2 })),
        topP: Type.Optional(Type.Number({ minimum: 0, maximum: 1 })),
        topK: Type.Optional(Type.Integer({ minimum: 1 })),
        maxOutputTokens: Type.Optional(Type.Integer({ minimum: 1 })),
        stopSequences: Type.Optional(Type.Array(Type.String(), { maxItems: 16 })),
        responseMimeType: Type.Optional(Type.String()),
        responseSchema: Type.Optional(Type.Object({})),
        thinkingConfig: Type.Optional(Type.Object({})),
        candidateCount: Type.Optional(Type.Integer({ minimum: 1, maximum: 8 })),
      }),
    ),
    safetySettings: Type.Optional(Type.Array(Type.Object({}))),
    tools: Type.Optional(Type.Array(Type.Object({}))),
    toolConfig: Type.Optional(Type.Object({})),
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
});
export type UsageMetadata = Static<typeof UsageMetadata>;

const AnswerPart = Type.Object({
  text: Type.Optional(Type.String()),
  thought: Type.Optional(Type.Boolean()),
  functionCall: Type.Optional(
    Type.Object({ id: Type.Optional(Type.String()), name: Type.String(), args: Type.Optional(Type.Unknown()) }),
  ),
});

/**
 * A generateContent answer, and each chunk of a stream (the same shape). A blocked prompt has no candidates,
 * only promptFeedback; some object the protocol names must be there.
 */
export const GenerateContentResponse = objectWithOneOf(
  {
    candidates: Type.Optional(
      Type.Array(
        Type.Object({
          content: Type.Optional(Type.Object({ parts: Type.Optional(Type.Array(AnswerPart)) })),
          finishReason: Type.Optional(Type.String()),
          index: Type.Optional(Type.Integer({ minimum: 0 })),
        }),
      ),
    ),
    usageMetadata: Type.Optional(UsageMetadata),
    modelVersion: Type.Optional(Type.String()),
    responseId: Type.Optional(Type.String()),
    promptFeedback: Type.Optional(Type.Object({})),
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

const finishReasons: Readonly<Record<string, FinishReason['unified']>> = {
  STOP: 'stop',
  MAX_TOKENS: 'length',
  SAFETY: 'content-filter',
  RECITATION: 'content-filter',
  BLOCKLIST: 'content-filter',
  PROHIBITED_CONTENT: 'content-filter',
  SPII: 'content-filter',
  MALFORMED_FUNCTION_CALL: 'error',
};

/** The protocol ends a turn of calls with STOP; other protocols name that finish, so it is named here. */
export function finishReasonOf(raw: string, { madeCalls }: { madeCalls: boolean }): FinishReason {
  return { unified: madeCalls && raw === 'STOP' ? 'tool-calls' : (finishReasons[raw] ?? 'other'), raw };
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
    inputTokens: (metadata.promptTokenCount ?? 0) + (metadata.toolUsePromptTokenCount ?? 0),
    outputTokens: (metadata.candidatesTokenCount ?? 0) + (metadata.thoughtsTokenCount ?? 0),
  };
}

export const wireUsageMetadata = (usage: TokenUsage | undefined) =>
  usage && {
    promptTokenCount: usage.inputTokens,
    candidatesTokenCount: usage.outputTokens,
    totalTokenCount: usage.inputTokens + usage.outputTokens,
  };
