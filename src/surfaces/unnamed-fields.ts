import type { TObject } from 'typebox';

/**
 * The fields of a request body that its protocol's schema does not name. The schemas keep unnamed fields, so
 * a request relayed to an upstream of its own protocol carries them as sent; the canonical request has no place
 * for them, so a translated one goes without them and says so (`x-gateway-dropped-parameters`).
 */
export function unnamedFields(body: object, schema: TObject): string[] {
  return Object.keys(body).filter((field) => !Object.hasOwn(schema.properties, field));
}
