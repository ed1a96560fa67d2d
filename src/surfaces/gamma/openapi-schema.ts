import type { JsonObject } from '../../protocols/gemini/content.ts';
import { schemaMapKeywords as schemaMaps, schemaValuedKeywords as schemaValued } from '../../domain/json-schema.ts';
import { boundKeywords, countKeywords, openApiOnlyKeywords, unspecifiedType } from '../../protocols/gemini/schema.ts';

/**
 * The string formats a converted schema keeps: JSON Schema's that OpenAI's strict subset and Anthropic's
 * structured outputs both take. Any other (the dialect's `enum`, whose `enum` says it all; `byte`, `password`; a
 * number's size, `int32` or `double`) is no format they hold an answer to, and is left out rather than refused.
 */
const sharedStringFormats = new Set([
  'date-time',
  'date',
  'time',
  'duration',
  'email',
  'hostname',
  'ipv4',
  'ipv6',
  'uuid',
]);

const isJsonObject = (value: unknown): value is JsonObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** A schema, or a list of them, where the keyword holds one; a `true`/`false` schema as it is. */
function schemaValue(value: unknown, dropped: Set<string>): unknown {
  if (Array.isArray(value)) return value.map((item) => (isJsonObject(item) ? jsonSchemaOf(item, dropped) : item));
  return isJsonObject(value) ? jsonSchemaOf(value, dropped) : value;
}

/** A number proto3 JSON wrote as a string (`"1"`, `"0.5"`) as the number; any other value as it is. */
function numberOf(value: unknown): unknown {
  if (typeof value !== 'string' || value.trim() === '') return value;
  const number = Number(value);
  return Number.isFinite(number) ? number : value;
}

/** The JSON Schema type of the dialect's (`OBJECT` is `object`); the unspecified type is none. */
function typeOf(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  return value === unspecifiedType ? undefined : value.toLowerCase();
}

/**
 * A map of property schemas, each converted, in the order `propertyOrdering` gives (the order the answer writes
 * them in, which JSON Schema says by the order of the keys); properties it does not list follow, as written.
 */
function propertiesOf(properties: JsonObject, ordering: unknown, dropped: Set<string>): JsonObject {
  const listed = Array.isArray(ordering)
    ? new Set(ordering.filter((name): name is string => typeof name === 'string' && Object.hasOwn(properties, name)))
    : new Set<string>();
  const names = [...listed, ...Object.keys(properties).filter((name) => !listed.has(name))];
  return Object.fromEntries(names.map((name) => [name, schemaValue(properties[name], dropped)]));
}

/**
 * The JSON Schema value of one keyword of a schema of type `type` (converted), or undefined where JSON Schema has
 * no place for it: counts and bounds as numbers, an enum of numbers as numbers (the dialect writes every value as
 * a string), sub-schemas converted, the dialect's own keywords left to `jsonSchemaOf`, any other as written.
 */
function keywordValue(
  keyword: string,
  value: unknown,
  { type, source, dropped }: { type: unknown; source: JsonObject; dropped: Set<string> },
) {
  if (keyword === 'type') return typeOf(value);
  if (keyword === 'format') {
    if (type === 'string' && typeof value === 'string' && sharedStringFormats.has(value)) return value;
    // `enum` says no more than the schema's `enum` does; another format is left out, and named.
    if (value !== 'enum') dropped.add('format');
    return undefined;
  }
  if (keyword === 'enum' && Array.isArray(value) && (type === 'integer' || type === 'number'))
    return value.map(numberOf);
  if (countKeywords.has(keyword) || boundKeywords.has(keyword)) return numberOf(value);
  if (openApiOnlyKeywords.has(keyword)) {
    // `nullable` and `propertyOrdering` are carried otherwise (a null type, the order of the properties).
    if (keyword === 'example') dropped.add('example');
    return undefined;
  }
  if (keyword === 'properties' && isJsonObject(value)) return propertiesOf(value, source.propertyOrdering, dropped);
  if (schemaMaps.has(keyword) && isJsonObject(value)) return propertiesOf(value, undefined, dropped);
  return schemaValued.has(keyword) ? schemaValue(value, dropped) : value;
}

/**
 * A schema of the protocol's OpenAPI subset (src/protocols/gemini/schema.ts) as JSON Schema, keyword by keyword:
 * the types in JSON Schema's case, counts as integers, only the string formats every other protocol takes,
 * `nullable` as a `null` type, `propertyOrdering` as the order of the properties, `example` (OpenAPI's, with no
 * counterpart) left out. A JSON Schema keyword a client wrote among them is kept, its sub-schemas converted. It is
 * walked by keyword: a property named `enum`, `default` or `nullable` is a schema like any other. The keywords
 * left out that said something (`format`, `example`) are added to `dropped`, for the client to be told.
 */
export function jsonSchemaOf(source: JsonObject, dropped: Set<string>): JsonObject {
  const type = typeOf(source.type);
  const entries: Array<[string, unknown]> = [];
  for (const [keyword, value] of Object.entries(source)) {
    const converted = keywordValue(keyword, value, { type, source, dropped });
    if (converted !== undefined) entries.push([keyword, converted]);
  }
  const schema: JsonObject = Object.fromEntries(entries);
  // The protocol answers an object with the properties it lists and no others: closed, as JSON Schema says it.
  if (schema.type === 'object' && isJsonObject(schema.properties) && schema.additionalProperties === undefined)
    schema.additionalProperties = false;
  return source.nullable === true ? nullableOf(schema) : schema;
}

/**
 * OpenAPI's `nullable: true` as JSON Schema's null among the types (and the values, for an enum): without it the
 * schema would refuse null. `nullable: false` is JSON Schema's default, and says nothing.
 */
function nullableOf(schema: JsonObject): JsonObject {
  const values = Array.isArray(schema.enum) && !schema.enum.includes(null) ? { enum: [...schema.enum, null] } : {};
  if (typeof schema.type === 'string') return { ...schema, type: [schema.type, 'null'], ...values };
  return schema.type === undefined ? { anyOf: [schema, { type: 'null' }] } : { ...schema, ...values };
}
