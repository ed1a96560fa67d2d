/**
 * The API's Schema object, the dialect of `generationConfig.responseSchema` and `functionDeclarations[].parameters`:
 * a subset of OpenAPI 3.0's schema (Google's Schema reference; js-genai's `Schema` type). Its fields, by what
 * their values are:
 * - `type`: `TYPE_UNSPECIFIED` (no type), `STRING`, `NUMBER`, `INTEGER`, `BOOLEAN`, `ARRAY`, `OBJECT`, `NULL`;
 * - `format`: any string; the API acts on `enum` (a value among `enum`) and `date-time` for a string, and the
 *   number and integer formats (`float`, `double`, `int32`, `int64`) size a number;
 * - `title`, `description`, `pattern`: text; `nullable`: a boolean (OpenAPI's, where JSON Schema has a `null` type);
 * - `enum`: strings, whatever the type (an INTEGER's values are written `"101"`); `required`, `propertyOrdering`:
 *   property names, the latter the order the answer writes them in;
 * - `default`, `example`: values (`example` OpenAPI's own);
 * - `countKeywords`: int64 counts, which proto3 JSON writes as strings (the SDK types them so: `minItems: "1"`);
 * - `boundKeywords`: doubles, which proto3 JSON may write as strings too;
 * - `items`: a schema; `anyOf`: schemas; `properties`: schemas by property name.
 */

/** The type that says nothing: a schema of it has no type. */
export const unspecifiedType = 'TYPE_UNSPECIFIED';

/** The counts, int64. */
export const countKeywords: ReadonlySet<string> = new Set([
  'minItems',
  'maxItems',
  'minLength',
  'maxLength',
  'minProperties',
  'maxProperties',
]);

/** The bounds of a number, doubles. */
export const boundKeywords: ReadonlySet<string> = new Set(['minimum', 'maximum']);

/** Fields of the dialect that JSON Schema has no counterpart for: what they say is carried otherwise, or nowhere. */
export const openApiOnlyKeywords: ReadonlySet<string> = new Set(['nullable', 'propertyOrdering', 'example']);
