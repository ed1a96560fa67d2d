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

/** Where a member of an event's bytes is to be replaced, and its bytes there instead. */
export interface MemberSplice {
  at: number;
  length: number;
  replacement: Uint8Array;
}

/** An event or answer that was read: its bytes, the offset in them where its JSON text begins, and that text. */
export interface ReadEvent {
  bytes: Uint8Array;
  dataStart: number;
  data: string;
}

const dataField = Buffer.from('data:');
const space = 0x20;

/** Where the data of a server-sent event that starts at `start` begins: after its `data:` field name and space. */
export function sseDataStart(bytes: Uint8Array, start: number): number | undefined {
  if (!holdsAt(bytes, dataField, start)) return undefined;
  return start + dataField.length + (bytes[start + dataField.length] === space ? 1 : 0);
}

/** Whether `bytes` hold `part` at `at`. */
function holdsAt(bytes: Uint8Array, part: Uint8Array, at: number): boolean {
  if (at + part.length > bytes.length) return false;
  for (let offset = 0; offset < part.length; offset++) if (bytes[at + offset] !== part[offset]) return false;
  return true;
}

const openBrace = 0x7b;
const openBracket = 0x5b;
const comma = 0x2c;

/**
 * Whether the member at `at` of an object's text is one of its own, not of an object or array nested in it,
 * and the text before it is ASCII (so its offset in the text is its offset in the bytes). One pass over the
 * text before it, with nothing allocated: a chat chunk names its model near its start, in every event.
 */
function isAsciiTopLevelMember(text: string, at: number): boolean {
  if (text.charCodeAt(0) !== openBrace) return false;
  let lastMark = openBrace;
  for (let index = 1; index < at; index++) {
    const code = text.charCodeAt(index);
    if (code > 0x7f || code === openBrace || code === openBracket) return false;
    if (code > 0x20) lastMark = code;
  }
  // It starts a member (a quote inside a string is escaped, so one after a `{` or a `,` opens a name).
  return lastMark === openBrace || lastMark === comma;
}

/**
 * Finds a renamed top-level field of an event or answer, `"key":"was"`, to splice the served model into its
 * bytes without writing it again. It is spliced where the text up to the field is ASCII (so the field's byte
 * offset is its offset in the text) and the field is a member of the outermost object, not of one nested in it
 * (such as a tool's input); anywhere else the event or answer is written again whole.
 * An upstream names the same model in every event: the member's text and bytes are made once per stream, and
 * the search runs on the text the meter already decoded.
 */
export function topLevelSplicer({
  modelId,
}: ServedModel): (event: ReadEvent, field: RenamedField) => MemberSplice | undefined {
  let made: { key: string; was: string; member: string; bytes: Buffer; replacement: Buffer } | undefined;
  return ({ bytes, dataStart, data }, { path, was }) => {
    if (path.length !== 1) return undefined;
    const key = path[0]!;
    if (made?.key !== key || made.was !== was) {
      const member = `"${key}":${JSON.stringify(was)}`;
      made = {
        key,
        was,
        member,
        bytes: Buffer.from(member),
        replacement: Buffer.from(`"${key}":${JSON.stringify(modelId)}`),
      };
    }
    const at = data.indexOf(made.member);
    // A member named twice is read as its last: written again whole, the event names its model once.
    if (at === -1 || !isAsciiTopLevelMember(data, at) || data.includes(made.member, at + made.member.length))
      return undefined;
    const offset = dataStart + at;
    return holdsAt(bytes, made.bytes, offset)
      ? { at: offset, length: made.bytes.length, replacement: made.replacement }
      : undefined;
  };
}
