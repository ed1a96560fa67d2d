/**
 * The shape of a JSON Schema as the protocols' descriptions walk it: which keywords hold sub-schemas, and which
 * hold data. Each protocol's own subset (what its strict or structured answers take) is its description's.
 */

/** A schema object (`true`/`false` schemas and non-objects are data). */
export type SchemaObject = Readonly<Record<string, unknown>>;

/** Keywords whose values map names to schemas (the names are the client's, never keywords). */
export const schemaMapKeywords: ReadonlySet<string> = new Set([
  'properties',
  '$defs',
  'definitions',
  'patternProperties',
  'dependentSchemas',
]);

/** Keywords whose values are a schema, or a list of schemas; every other keyword's value is data. */
export const schemaValuedKeywords: ReadonlySet<string> = new Set([
  'items',
  'prefixItems',
  'additionalItems',
  'anyOf',
  'allOf',
  'oneOf',
  'not',
  'if',
  'then',
  'else',
  'contains',
  'additionalProperties',
  'propertyNames',
  'unevaluatedItems',
  'unevaluatedProperties',
]);

export const isSchemaObject = (value: unknown): value is SchemaObject =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** The sub-schemas of one schema object, in the order its keywords are written. */
function subSchemas(node: SchemaObject): unknown[] {
  const children: unknown[] = [];
  for (const keyword in node) {
    const value = node[keyword];
    if (schemaValuedKeywords.has(keyword)) {
      if (Array.isArray(value)) for (const item of value) children.push(item);
      else children.push(value);
    } else if (schemaMapKeywords.has(keyword) && isSchemaObject(value)) {
      for (const name in value) children.push(value[name]);
    }
  }
  return children;
}

/**
 * The first schema object in `schema` (the root, then its sub-schemas, found by keyword: a property named
 * `minLength` is a property) of which `fails` is true. Each is asked once, with a list of its own, so the walk is
 * linear in the schema's size however wide or deep a client makes it.
 */
export function findSchemaObject(
  schema: SchemaObject,
  fails: (node: SchemaObject) => boolean,
): SchemaObject | undefined {
  const pending: unknown[] = [schema];
  for (let next = pending.pop(); next !== undefined; next = pending.pop()) {
    if (!isSchemaObject(next)) continue;
    if (fails(next)) return next;
    for (const child of subSchemas(next)) pending.push(child);
  }
  return undefined;
}

/** A schema with keywords left out, and the keywords it left out (each once). */
export interface KeptSchema {
  schema: SchemaObject;
  leftOut: string[];
}

/** How a protocol holding answers to a subset of JSON Schema takes a schema (`heldSubset`). */
export interface SubsetRules {
  /** Whether the protocol refuses `keyword` with this value. */
  refuses: (keyword: string, value: unknown) => boolean;
  /** Whether every object must say it is closed (`additionalProperties: false`), as one left open is refused. */
  closesObjects: boolean;
}

/** Whether a schema object describes an object: typed so, or listing properties. */
export function describesObject(node: SchemaObject): boolean {
  return (
    node.type === 'object' ||
    (Array.isArray(node.type) && node.type.includes('object')) ||
    isSchemaObject(node.properties)
  );
}

/**
 * `schema` as a protocol that holds answers to a subset of JSON Schema takes it: without the keywords it refuses in
 * any schema object of it, and, where it wants them so, every object closed (which an answer to the schema as
 * written may be as well: nothing is lost). What a keyword left out said is written into its object's
 * `description` (`{"minLength":1}`), as the vendors' own SDKs do, so the model still reads the constraint it is no
 * longer held to. The schema itself comes back when nothing changes. Recursive: a request's schemas are held to
 * `maxNesting` levels before they reach a protocol.
 */
export function heldSubset(schema: SchemaObject, rules: SubsetRules): KeptSchema {
  const leftOut = new Set<string>();
  const changed = { any: false };
  const kept = keptObject(schema, rules, { leftOut, changed });
  return { schema: changed.any ? kept : schema, leftOut: [...leftOut] };
}

function keptObject(
  node: SchemaObject,
  rules: SubsetRules,
  walk: { leftOut: Set<string>; changed: { any: boolean } },
): SchemaObject {
  const { refuses } = rules;
  const { leftOut } = walk;
  const kept: Record<string, unknown> = {};
  const refused: Record<string, unknown> = {};
  for (const [keyword, value] of Object.entries(node)) {
    if (refuses(keyword, value)) {
      refused[keyword] = value;
      leftOut.add(keyword);
    } else if (schemaValuedKeywords.has(keyword)) {
      kept[keyword] = Array.isArray(value)
        ? value.map((item) => (isSchemaObject(item) ? keptObject(item, rules, walk) : item))
        : isSchemaObject(value)
          ? keptObject(value, rules, walk)
          : value;
    } else if (schemaMapKeywords.has(keyword) && isSchemaObject(value)) {
      kept[keyword] = Object.fromEntries(
        Object.entries(value).map(([name, sub]) => [name, isSchemaObject(sub) ? keptObject(sub, rules, walk) : sub]),
      );
    } else kept[keyword] = value;
  }
  if (rules.closesObjects && describesObject(node) && kept.additionalProperties === undefined) {
    kept.additionalProperties = false;
    walk.changed.any = true;
  }
  if (Object.keys(refused).length === 0) return kept;
  walk.changed.any = true;
  const said = JSON.stringify(refused);
  kept.description = typeof kept.description === 'string' ? `${kept.description} ${said}` : said;
  return kept;
}
