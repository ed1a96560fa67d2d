import type { RelayOperation, ServedModel } from '../provider-adapter.ts';

/** Where each relayed protocol's answers and stream events name their model. */
const modelFields: Readonly<Record<RelayOperation, ServedModel['fields']>> = {
  'chat-completions': [['model']],
  // The whole Response, and the Response inside response.created, response.completed and the like.
  responses: [['model'], ['response', 'model']],
  // The whole Message, and the Message of message_start.
  messages: [['model'], ['message', 'model']],
  'generate-content': [['modelVersion']],
  'stream-generate-content-sse': [['modelVersion']],
  'stream-generate-content-json': [['modelVersion']],
};

/** The catalog model `modelId` as the answers of `operation` name it. */
export function servedAs(operation: RelayOperation, modelId: string): ServedModel {
  return { modelId, fields: modelFields[operation] };
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A model field an answer or event named, set to the served model: where it is, and what it held. */
export interface RenamedField {
  path: readonly string[];
  was: string;
}

/**
 * Sets the model an answer or a stream event names (a field that holds a string, where the protocol puts it)
 * to the served one; the fields changed.
 */
export function nameServedModel(value: unknown, { modelId, fields }: ServedModel): RenamedField[] {
  const renamed: RenamedField[] = [];
  for (const path of fields) {
    let holder: unknown = value;
    for (let step = 0; step < path.length - 1; step++) holder = isRecord(holder) ? holder[path[step]!] : undefined;
    const last = path[path.length - 1]!;
    const was = isRecord(holder) ? holder[last] : undefined;
    if (isRecord(holder) && typeof was === 'string' && was !== modelId) {
      holder[last] = modelId;
      renamed.push({ path, was });
    }
  }
  return renamed;
}

const openBrace = 0x7b;
const openBracket = 0x5b;
const comma = 0x2c;
const isSpace = (byte: number) => byte === 0x20 || byte === 0x0a || byte === 0x0d || byte === 0x09;

/** Where a member of an event's bytes is to be replaced, and its bytes there instead. */
export interface MemberSplice {
  at: number;
  length: number;
  replacement: Uint8Array;
}

/** Whether `bytes` hold `member` at `at`. */
function holdsAt(bytes: Uint8Array, member: Uint8Array, at: number): boolean {
  if (at + member.length > bytes.length) return false;
  for (let offset = 0; offset < member.length; offset++) if (bytes[at + offset] !== member[offset]) return false;
  return true;
}

/**
 * Finds a renamed top-level field in an event's bytes (`start` to `end` of `bytes`), `"key":"was"`, to splice
 * the served model into them without writing the event again. It is found plainly there when it follows a `{`
 * or a `,` (so it starts a member: a quote inside a string is escaped) and no `{` or `[` stands between the
 * event's first `{` and it (so it is a member of the outermost object, not of one nested in it, such as a
 * tool's input). An upstream names the same model in every event: the member's bytes are made once per
 * stream, and the search is a walk over the few bytes before the field (a native search costs more per call
 * than such a walk on a small event).
 */
export function topLevelSplicer({
  modelId,
}: ServedModel): (
  event: { bytes: Uint8Array; start: number; end: number },
  field: RenamedField,
) => MemberSplice | undefined {
  let made: { key: string; was: string; member: Buffer; replacement: Buffer } | undefined;
  return ({ bytes, start, end }, { path, was }) => {
    if (path.length !== 1) return undefined;
    const key = path[0]!;
    if (made?.key !== key || made.was !== was)
      made = {
        key,
        was,
        member: Buffer.from(`"${key}":${JSON.stringify(was)}`),
        replacement: Buffer.from(`"${key}":${JSON.stringify(modelId)}`),
      };
    let index = start;
    while (index < end && bytes[index] !== openBrace) index++;
    let previous = openBrace;
    for (index++; index < end; index++) {
      const byte = bytes[index]!;
      if (byte === openBrace || byte === openBracket) return undefined;
      if ((previous === openBrace || previous === comma) && holdsAt(bytes, made.member, index))
        return { at: index, length: made.member.length, replacement: made.replacement };
      if (!isSpace(byte)) previous = byte;
    }
    return undefined;
  };
}
