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

/** The quoted names of an operation's model fields, made once per operation. */
const namesByOperation = new Map<RelayOperation, readonly Buffer[]>();
function fieldNamesOf(operation: RelayOperation): readonly Buffer[] {
  let names = namesByOperation.get(operation);
  if (!names) {
    names = [...new Set(modelFields[operation].map((path) => `"${path.at(-1)}"`))].map((name) => Buffer.from(name));
    namesByOperation.set(operation, names);
  }
  return names;
}

const openBrace = 0x7b;
const closeBrace = 0x7d;
const quote = 0x22;
const backslash = 0x5c;

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A JSON value with the model it names set to `modelId`; whether any field changed. */
function setModel(value: unknown, modelId: string, fields: ReadonlyArray<readonly string[]>): boolean {
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
  return changed;
}

const textOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8');

/** One JSON object's text with the model it names set to `modelId`; unchanged (byte for byte) when it names none. */
function withModel(text: Uint8Array, modelId: string, fields: ReadonlyArray<readonly string[]>): Uint8Array {
  let value: unknown;
  try {
    value = JSON.parse(textOf(text));
  } catch {
    return text;
  }
  return setModel(value, modelId, fields) ? Buffer.from(JSON.stringify(value)) : text;
}

const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/**
 * A piece that is one whole JSON object (a JSON answer, as a non-streamed relay hands it on) with its model set,
 * read with one parse instead of a walk over its bytes; undefined when the piece is anything else.
 */
function wholeObjectWithModel(
  chunk: Uint8Array,
  modelId: string,
  fields: ReadonlyArray<readonly string[]>,
): Uint8Array | undefined {
  let first = 0;
  while (first < chunk.length && isSpace(chunk[first]!)) first++;
  let last = chunk.length - 1;
  while (last > first && isSpace(chunk[last]!)) last--;
  if (chunk[first] !== openBrace || chunk[last] !== closeBrace) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(textOf(chunk));
  } catch {
    // Several objects, or broken JSON: the walk reads each object on its own.
    return undefined;
  }
  if (!setModel(value, modelId, fields)) return chunk;
  // As the walk leaves them: the bytes around the object pass as they came.
  return Buffer.concat([chunk.subarray(0, first), Buffer.from(JSON.stringify(value)), chunk.subarray(last + 1)]);
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
  const names = fieldNamesOf(operation);
  for await (const chunk of body) {
    const bytes = Buffer.from(chunk.buffer, chunk.byteOffset, chunk.byteLength);
    if (!names.some((name) => bytes.includes(name))) {
      yield chunk;
      continue;
    }
    const whole = wholeObjectWithModel(chunk, modelId, fields);
    if (whole) {
      yield whole;
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
