import type { RelayOperation } from '../providers/provider-adapter.ts';

/** Where each relayed protocol's answers and stream events name their model. */
const modelFields: Readonly<Record<RelayOperation, ReadonlyArray<readonly [string, ...string[]]>>> = {
  'chat-completions': [['model']],
  // The whole Response, and the Response inside response.created, response.completed and the like.
  responses: [['model'], ['response', 'model']],
  // The whole Message, and the Message of message_start.
  messages: [['model'], ['message', 'model']],
  'generate-content': [['modelVersion']],
  'stream-generate-content-sse': [['modelVersion']],
  'stream-generate-content-json': [['modelVersion']],
};

const openBrace = 0x7b;
const closeBrace = 0x7d;
const quote = 0x22;
const backslash = 0x5c;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** One JSON object's text with the model it names set to `modelId`; unchanged (byte for byte) when it names none. */
function withModel(text: Uint8Array, modelId: string, fields: ReadonlyArray<readonly string[]>): Uint8Array {
  let value: unknown;
  try {
    value = JSON.parse(Buffer.from(text).toString('utf8'));
  } catch {
    return text;
  }
  let changed = false;
  for (const path of fields) {
    let holder: unknown = value;
    for (const key of path.slice(0, -1)) holder = isRecord(holder) ? holder[key] : undefined;
    const last = path.at(-1)!;
    if (isRecord(holder) && typeof holder[last] === 'string' && holder[last] !== modelId) {
      holder[last] = modelId;
      changed = true;
    }
  }
  return changed ? Buffer.from(JSON.stringify(value)) : text;
}

/**
 * A relayed answer as the client's protocol names the model it asked for: the catalog id, not the upstream's
 * own (the request went out under the upstream's id). The relay hands on whole JSON answers and whole stream
 * events, so each JSON object at the top level of a piece (an answer, an event's `data:`, an element of
 * Gemini's JSON array) is read whole; its model field is set, and everything else passes as it came.
 */
export async function* answeredAs(
  body: AsyncIterable<Uint8Array>,
  modelId: string,
  operation: RelayOperation,
): AsyncGenerator<Uint8Array> {
  const fields = modelFields[operation];
  // Most events of a stream name no model (content deltas): a piece without the field's name passes unread.
  const names = [...new Set(fields.map((path) => Buffer.from(`"${path.at(-1)}"`)))];
  for await (const chunk of body) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (!names.some((name) => bytes.includes(name))) {
      yield chunk;
      continue;
    }
    const pieces: Uint8Array[] = [];
    let copied = 0;
    let depth = 0;
    let start = 0;
    let inString = false;
    let escaped = false;
    for (let index = 0; index < chunk.length; index++) {
      const byte = chunk[index]!;
      if (depth === 0) {
        if (byte === openBrace) {
          depth = 1;
          start = index;
        }
        continue;
      }
      if (inString) {
        if (escaped) escaped = false;
        else if (byte === backslash) escaped = true;
        else if (byte === quote) inString = false;
      } else if (byte === quote) inString = true;
      else if (byte === openBrace) depth++;
      else if (byte === closeBrace && --depth === 0) {
        pieces.push(chunk.subarray(copied, start), withModel(chunk.subarray(start, index + 1), modelId, fields));
        copied = index + 1;
      }
    }
    pieces.push(chunk.subarray(copied));
    yield pieces.length === 1 ? chunk : Buffer.concat(pieces);
  }
}
