/**
 * What a fake answers when asked for JSON: a value of the schema (JSON Schema, or Gemini's OpenAPI subset with
 * upper-case type names) whose strings are `text`, the fake's usual echo; without a schema (a JSON mode whose
 * schema only the prompt tells), `{"query": text}`, the shape the fakes' tool calls carry, as a model would follow
 * the prompt.
 */
export function jsonAnswer(schema: unknown, text: string): string {
  return JSON.stringify(schema === undefined ? { query: text } : sampleOf(schema, text));
}

/**
 * The arguments (JSON text) a fake calls a tool with, as a model follows the tool's declared parameters: a value
 * of each property of their schema, strings `text`; a tool that declares no properties is called with `{}`.
 */
export function toolArguments(parameters: unknown, text: string): string {
  const properties =
    parameters !== null && typeof parameters === 'object' && 'properties' in parameters
      ? parameters.properties
      : undefined;
  return JSON.stringify(sampleOf({ type: 'object', properties }, text));
}

interface Schema {
  type?: unknown;
  properties?: Record<string, unknown>;
  items?: unknown;
  enum?: unknown[];
}

function sampleOf(schema: unknown, text: string): unknown {
  const { type, properties, items, enum: values } = (schema ?? {}) as Schema;
  if (Array.isArray(values)) return values[0];
  switch (String(type).toLowerCase()) {
    case 'object':
      return Object.fromEntries(Object.entries(properties ?? {}).map(([key, value]) => [key, sampleOf(value, text)]));
    case 'array':
      return [sampleOf(items, text)];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    default:
      return text;
  }
}
