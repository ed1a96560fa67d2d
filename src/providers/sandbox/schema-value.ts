/**
 * A small value that validates against a JSON Schema, for the sandbox's tool arguments and structured answers.
 * Strings are made of the prompt's words, so an answer still says what was asked. The value is chosen, not
 * searched for: `pattern`, `uniqueItems`, `not` and `if`/`then` are not honoured.
 */

type Schema = Readonly<Record<string, unknown>>;

/** Deep enough for any schema a client writes by hand; a schema that recurses through required fields stops here. */
const maxDepth = 24;

/** Fixed values of the formats a validator checks, so a formatted string always passes. */
const formatted: Readonly<Record<string, string>> = {
  'date-time': '2026-01-01T00:00:00Z',
  date: '2026-01-01',
  time: '00:00:00Z',
  email: 'sandbox@example.com',
  uri: 'https://example.com/',
  'uri-reference': 'https://example.com/',
  url: 'https://example.com/',
  uuid: '00000000-0000-4000-8000-000000000000',
  ipv4: '127.0.0.1',
  ipv6: '::1',
  hostname: 'example.com',
};

function isSchema(value: unknown): value is Schema {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

function numberField(schema: Schema, name: string): number | undefined {
  const value = schema[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function firstSchema(value: unknown): Schema | undefined {
  return Array.isArray(value) ? value.find(isSchema) : undefined;
}

function schemaList(value: unknown): Schema[] {
  return Array.isArray(value) ? value.filter(isSchema) : [];
}

/** A local `$ref` (`#/$defs/x`, `#/definitions/x`) looked up in the root schema. */
function resolve(ref: string, root: Schema): Schema {
  if (!ref.startsWith('#')) return {};
  let node: unknown = root;
  for (const token of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(token).replaceAll('~1', '/').replaceAll('~0', '~');
    node = isSchema(node) ? node[key] : undefined;
  }
  return isSchema(node) ? node : {};
}

/** The type to make: the schema's own (the first that is not null when it names several), else what its keywords imply. */
function typeOf(schema: Schema): string | undefined {
  const type = schema.type;
  if (typeof type === 'string') return type;
  if (Array.isArray(type)) {
    const named = type.filter((entry): entry is string => typeof entry === 'string');
    return named.find((entry) => entry !== 'null') ?? named[0];
  }
  if (isSchema(schema.properties) || Array.isArray(schema.required)) return 'object';
  if (schema.items !== undefined || schema.prefixItems !== undefined) return 'array';
  return undefined;
}

/**
 * Most values, and code points of strings, that one answer is made of: a schema that asks for more (a
 * `minLength` of a billion, arrays of a million arrays, a `$ref` that fans out at every level) gets an answer cut
 * there, as a model's answer is cut by its output limit, rather than a process busy for minutes making it. Every
 * value made counts, so the work is linear in this and in the schema.
 */
const maxAnswerSize = 1 << 16;

/** What every value of one answer is made from: the text to fill strings with, the schema `$ref`s resolve in, and what is left of its size. */
interface Filling {
  text: string;
  root: Schema;
  left: { size: number };
}

function textValue(schema: Schema, filling: Filling): string {
  const format = typeof schema.format === 'string' ? formatted[schema.format] : undefined;
  const { left } = filling;
  const max = Math.max(0, Math.min(numberField(schema, 'maxLength') ?? Number.POSITIVE_INFINITY, left.size));
  const min = Math.min(numberField(schema, 'minLength') ?? 0, max);
  const source = format ?? filling.text;
  // Lengths count code points, as JSON Schema does; the text is read only as far as the value goes.
  let points = 0;
  let end = 0;
  for (const point of source) {
    if (points === max) break;
    points++;
    end += point.length;
  }
  left.size -= Math.max(points, min);
  return source.slice(0, end) + 'x'.repeat(Math.max(0, min - points));
}

/** The smallest allowed number (0 when allowed), a multiple of `multipleOf` when it is set. */
function numberValue(schema: Schema, { integer }: { integer: boolean }): number {
  const step = numberField(schema, 'multipleOf') ?? (integer ? 1 : undefined);
  const exclusiveMin = numberField(schema, 'exclusiveMinimum');
  const exclusiveMax = numberField(schema, 'exclusiveMaximum');
  const minimum = numberField(schema, 'minimum');
  const maximum = numberField(schema, 'maximum');
  let low = minimum ?? Number.NEGATIVE_INFINITY;
  if (exclusiveMin !== undefined) low = Math.max(low, exclusiveMin + (step ?? 1) / 2);
  let high = maximum ?? Number.POSITIVE_INFINITY;
  if (exclusiveMax !== undefined) high = Math.min(high, exclusiveMax - (step ?? 1) / 2);
  let value = Math.min(Math.max(0, low), high);
  if (step !== undefined) {
    const up = Math.ceil(value / step) * step;
    value = up <= high ? up : Math.floor(value / step) * step;
  }
  return value;
}

function objectValue(schema: Schema, filling: Filling, depth: number): Record<string, unknown> {
  const properties = isSchema(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required)
    ? schema.required.filter((name): name is string => typeof name === 'string')
    : [];
  // With nothing required every declared property is filled (the answer says more), short of deep nesting.
  const names = required.length > 0 || depth > 4 ? required : Object.keys(properties);
  filling.left.size -= names.length;
  const value: Record<string, unknown> = {};
  for (const name of names) {
    const property = properties[name];
    const extra = schema.additionalProperties;
    value[name] = valueFor(isSchema(property) ? property : isSchema(extra) ? extra : {}, filling, depth + 1);
  }
  const minProperties = numberField(schema, 'minProperties') ?? 0;
  let count = Object.keys(value).length;
  const unused = count < minProperties ? Object.keys(properties).filter((key) => !(key in value)) : [];
  filling.left.size -= unused.length;
  for (let index = 0; count < minProperties && filling.left.size > 0; index++) {
    const name = unused[index] ?? `field${index}`;
    if (name in value) continue;
    const property = properties[name];
    value[name] = valueFor(isSchema(property) ? property : {}, filling, depth + 1);
    count++;
  }
  return value;
}

function arrayValue(schema: Schema, filling: Filling, depth: number): unknown[] {
  const prefix = schemaList(schema.prefixItems);
  filling.left.size -= prefix.length;
  const items = isSchema(schema.items) ? schema.items : {};
  const wanted = Math.max(numberField(schema, 'minItems') ?? 0, prefix.length);
  const value: unknown[] = [];
  while (value.length < wanted && filling.left.size > 0)
    value.push(valueFor(prefix[value.length] ?? items, filling, depth + 1));
  return value;
}

function valueFor(schema: Schema, filling: Filling, depth: number): unknown {
  if (depth > maxDepth || filling.left.size <= 0) return null;
  filling.left.size--;
  const { root } = filling;
  // A schema copied or merged costs its keywords: a large one reached again and again cannot make the work grow
  // past the answer's size.
  filling.left.size -= Object.keys(schema).length;
  if (typeof schema.$ref === 'string')
    return valueFor({ ...resolve(schema.$ref, root), ...withoutRef(schema) }, filling, depth + 1);
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0];
  const alternative = firstSchema(schema.anyOf) ?? firstSchema(schema.oneOf);
  if (alternative) return valueFor({ ...withoutAlternatives(schema), ...alternative }, filling, depth + 1);
  const all = schemaList(schema.allOf);
  for (const part of all) filling.left.size -= 1 + Object.keys(part).length;
  if (all.length > 0) return valueFor(all.reduce(mergeSchemas, withoutAlternatives(schema)), filling, depth + 1);
  switch (typeOf(schema)) {
    case 'object':
      return objectValue(schema, filling, depth);
    case 'array':
      return arrayValue(schema, filling, depth);
    case 'integer':
      return numberValue(schema, { integer: true });
    case 'number':
      return numberValue(schema, { integer: false });
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return textValue(schema, filling);
  }
}

function withoutRef(schema: Schema): Schema {
  const { $ref: _ref, ...rest } = schema;
  return rest;
}

function withoutAlternatives(schema: Schema): Schema {
  const { anyOf: _anyOf, oneOf: _oneOf, allOf: _allOf, ...rest } = schema;
  return rest;
}

/** Two schemas an `allOf` requires at once: their keywords together, properties and `required` joined. */
function mergeSchemas(left: Schema, right: Schema): Schema {
  const properties = {
    ...(isSchema(left.properties) ? left.properties : {}),
    ...(isSchema(right.properties) ? right.properties : {}),
  };
  const required = [
    ...(Array.isArray(left.required) ? left.required : []),
    ...(Array.isArray(right.required) ? right.required : []),
  ];
  return {
    ...left,
    ...right,
    ...(Object.keys(properties).length > 0 ? { properties } : {}),
    ...(required.length > 0 ? { required } : {}),
  };
}

/** A value valid against `schema`, its strings made of `text`. */
export function valueMatchingSchema(schema: Readonly<Record<string, unknown>>, text: string): unknown {
  return valueFor(schema, { text, root: schema, left: { size: maxAnswerSize } }, 0);
}
