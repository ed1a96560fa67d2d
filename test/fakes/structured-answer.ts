/**
 * What a fake answers when asked for JSON: a value of the schema (JSON Schema, or Gemini's OpenAPI subset with
 * upper-case type names) whose strings are `text`, the fake's usual echo; without a schema (a JSON mode whose
 * schema only the prompt tells), `{"query": text}`, as a model would follow the prompt.
 */
export function jsonAnswer(schema: unknown, text: string): string {
  return JSON.stringify(schema === undefined ? { query: text } : sampleOf(schema, text));
}

/**
 * The arguments a fake calls a tool with, following its declared schema as a model does: a value of each of its
 * properties (strings are `text`, numbers 1, booleans true, an enum its first value). A schema that lists no
 * properties (or no schema) takes any object: `{"query": text}`, unless it is closed, which takes only `{}`.
 */
export function toolArguments(schema: unknown, text: string): Record<string, unknown> {
  const properties = isObject(schema) && isObject(schema.properties) ? Object.keys(schema.properties) : [];
  if (properties.length === 0) return isObject(schema) && schema.additionalProperties === false ? {} : { query: text };
  const sample = sampleOf(schema, text);
  return isObject(sample) ? { ...sample } : { query: text };
}

const isObject = (value: unknown): value is Readonly<Record<string, unknown>> =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A schema's type in lower case: the first that is not null of a list of types (a nullable one). */
function typeOf(schema: Readonly<Record<string, unknown>>): string | undefined {
  const type = Array.isArray(schema.type) ? schema.type.find((name) => name !== 'null') : schema.type;
  return typeof type === 'string' ? type.toLowerCase() : undefined;
}

function sampleOf(schema: unknown, text: string): unknown {
  if (!isObject(schema)) return text;
  if (Array.isArray(schema.enum)) return schema.enum[0];
  if (Object.hasOwn(schema, 'const')) return schema.const;
  const variants = schema.anyOf ?? schema.oneOf;
  if (Array.isArray(variants) && variants.length > 0) return sampleOf(variants[0], text);
  switch (typeOf(schema)) {
    case 'object': {
      const properties = isObject(schema.properties) ? schema.properties : {};
      return Object.fromEntries(Object.entries(properties).map(([key, value]) => [key, sampleOf(value, text)]));
    }
    case 'array':
      return [sampleOf(schema.items, text)];
    case 'integer':
    case 'number':
      return 1;
    case 'boolean':
      return true;
    default:
      return text;
  }
}
