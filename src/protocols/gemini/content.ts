import { Type, type Static } from 'typebox';

/**
 * The Gemini API's content, as its requests and answers share it. Objects are open (fields the API adds, or
 * this gateway does not read, are kept and forwarded); the fields named here are typed as the API defines them.
 */

/** Any JSON object: function arguments and responses, schemas, and tools the gateway passes through. */
export const JsonObject = Type.Record(Type.String(), Type.Unknown());
export type JsonObject = Static<typeof JsonObject>;

/** Inline bytes, base64, with their media type. */
export const InlineData = Type.Object({ mimeType: Type.String(), data: Type.String() });

/** A file by URI (uploaded to the API, or an address on the web). */
export const FileData = Type.Object({ mimeType: Type.Optional(Type.String()), fileUri: Type.String() });

/** A call the model makes; the API may leave `id` out. */
export const FunctionCall = Type.Object({
  id: Type.Optional(Type.String()),
  name: Type.String(),
  args: Type.Optional(JsonObject),
});
export type FunctionCall = Static<typeof FunctionCall>;

/** The answer to a call, by id or (the API's older form) by name alone. */
export const FunctionResponse = Type.Object({
  id: Type.Optional(Type.String()),
  name: Type.String(),
  response: Type.Optional(JsonObject),
});
export type FunctionResponse = Static<typeof FunctionResponse>;

/** One part of a content: each holds one kind of data; a thought part is the model's reasoning text. */
export const Part = Type.Object({
  text: Type.Optional(Type.String()),
  thought: Type.Optional(Type.Boolean()),
  thoughtSignature: Type.Optional(Type.String()),
  inlineData: Type.Optional(InlineData),
  fileData: Type.Optional(FileData),
  functionCall: Type.Optional(FunctionCall),
  functionResponse: Type.Optional(FunctionResponse),
  executableCode: Type.Optional(JsonObject),
  codeExecutionResult: Type.Optional(JsonObject),
});
export type Part = Static<typeof Part>;

/** One turn: `user` or `model` (the API takes a missing role as the user's). */
export const Content = Type.Object({
  role: Type.Optional(Type.String()),
  parts: Type.Array(Part, { minItems: 1 }),
});
export type Content = Static<typeof Content>;

/** A turn of an answer, whose parts may be missing (a candidate that finished without output). */
export const AnswerContent = Type.Object({
  role: Type.Optional(Type.String()),
  parts: Type.Optional(Type.Array(Part)),
});

/**
 * Google's documented stand-in for a signature the gateway does not have (a conversation begun with another
 * model, a call another client made): Gemini then skips the check instead of refusing the turn.
 */
export const unsignedTurnSignature = 'skip_thought_signature_validator';

/** Whether the upstream model is of the generations that refuse an unsigned turn of calls (Gemini 3 and later). */
export function signsCallTurns(upstreamModel: string): boolean {
  const major = /^(?:models\/)?gemini-(\d+)/.exec(upstreamModel)?.[1];
  return major !== undefined && Number(major) >= 3;
}
