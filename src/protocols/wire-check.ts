import { Type, type Static, type TObject, type TProperties, type TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/** A compiled type guard of one wire shape (TypeBox's JIT-compiled check: it runs on every stream event). */
export type WireCheck<T> = (value: unknown) => value is T;

export function wireCheck<S extends TSchema>(schema: S): WireCheck<Static<S>> {
  const validator = Compile(schema);
  return (value: unknown): value is Static<S> => validator.Check(value);
}

/**
 * An object whose fields are each optional but of which at least one of `keys` is present: a JSON object of
 * another shape altogether (`{}`, an error page's JSON) is then not mistaken for one. Each alternative names
 * the field it requires (`{}`: any value, the field's schema being the object's), so it reads on its own where
 * the object is itself a member of a union (an OpenAPI linter looks no further up for the field).
 */
export function objectWithOneOf<P extends TProperties>(
  properties: P,
  keys: ReadonlyArray<keyof P & string>,
): TObject<P> {
  return Type.Object(properties, { anyOf: keys.map((key) => ({ properties: { [key]: {} }, required: [key] })) });
}
