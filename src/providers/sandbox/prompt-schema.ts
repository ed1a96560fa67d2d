import { textOf, type ChatMessage } from '../../domain/chat.ts';

type Schema = Readonly<Record<string, unknown>>;

const isRecord = (value: unknown): value is Record<string, unknown> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The schema of a JSON object (JSON mode answers objects): `type: "object"`, or declared `properties`. */
function isObjectSchema(value: unknown): value is Schema {
  return isRecord(value) && (value.type === 'object' || isRecord(value.properties));
}

/**
 * The outermost `{...}` spans of a text, found in one pass (braces inside JSON strings are not counted), so a
 * long prompt full of braces costs no more than its length.
 */
function outermostObjects(text: string): string[] {
  const spans: string[] = [];
  let depth = 0;
  let start = 0;
  let inString = false;
  for (let at = 0; at < text.length; at++) {
    const char = text[at];
    if (inString) {
      if (char === '\\') at++;
      else if (char === '"') inString = false;
    } else if (char === '"' && depth > 0) inString = true;
    else if (char === '{') {
      if (depth === 0) start = at;
      depth++;
    } else if (char === '}' && depth > 0) {
      depth--;
      if (depth === 0) spans.push(text.slice(start, at + 1));
    }
  }
  return spans;
}

function parsedSchema(span: string): Schema | undefined {
  try {
    const value: unknown = JSON.parse(span);
    return isObjectSchema(value) ? value : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The JSON Schema of an object that a prompt gives for its answer in JSON mode without one in the request (as
 * a user of a JSON-mode-only API writes it, in a system or user message): the last one written.
 */
export function schemaInPrompt(messages: readonly ChatMessage[]): Schema | undefined {
  let found: Schema | undefined;
  for (const message of messages) {
    if (message.role !== 'system' && message.role !== 'user') continue;
    for (const span of outermostObjects(textOf(message.content))) found = parsedSchema(span) ?? found;
  }
  return found;
}
