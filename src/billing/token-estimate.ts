import { imagesIn, partsOf, type ChatMessage, type ResponseFormat, type ToolDefinition } from '../domain/chat.ts';

/** Per-message framing tokens chat formats add around each message, and the primer of the reply. */
const tokensPerMessage = 4;
const replyPrimerTokens = 3;

/** Output tokens reserved and sent upstream when neither the client nor the catalog sets a maximum. */
export const defaultMaxOutputTokens = 4096;

/** Tokens reserved per input image: above what the major providers charge for a large image. */
export const tokensPerImage = 2_000;

/**
 * A bound no tokenizer exceeds, computed in one pass without tokenizing: byte-level and byte-fallback
 * tokenizers spend at most one token per UTF-8 byte. Reservations use it, so a request is admitted or
 * refused after work linear in its size, and a settlement capped at its hold does not undercharge the
 * prompt's text, tools and images. Input it has no canonical part for (audio, files, documents, thinking sent
 * back), which only a pass-through forwards, is not in it: each surface's decoder notes it
 * (`DecodedChat.uncountedInput`), and a relay carrying it is charged past its hold.
 */
export function promptTokenBound(
  messages: readonly ChatMessage[],
  tools: readonly ToolDefinition[] = [],
  responseFormat?: ResponseFormat,
): number {
  let tokens = replyPrimerTokens;
  for (const message of messages) {
    tokens += tokensPerMessage;
    for (const part of partsOf(message.content)) {
      if (part.type === 'text') tokens += Buffer.byteLength(part.text);
      else if (part.type === 'tool-call')
        tokens += Buffer.byteLength(part.call.name) + Buffer.byteLength(part.call.arguments);
      else if (part.type === 'tool-result') tokens += Buffer.byteLength(part.result.output);
    }
  }
  for (const tool of tools) tokens += Buffer.byteLength(JSON.stringify(tool));
  // A structured answer's schema is sent with the prompt, and providers bill it as input.
  if (responseFormat?.type === 'json_schema') tokens += Buffer.byteLength(JSON.stringify(responseFormat));
  return tokens + imagesIn(messages) * tokensPerImage;
}
