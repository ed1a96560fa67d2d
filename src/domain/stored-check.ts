import type { Static, TSchema } from 'typebox';
import { Compile } from 'typebox/compile';

/** A compiled check of one stored value that says, when it fails, what and where. */
export interface StoredCheck<T> {
  check: (value: unknown) => value is T;
  problem: (value: unknown) => string;
}

export function storedCheck<S extends TSchema>(schema: S): StoredCheck<Static<S>> {
  const validator = Compile(schema);
  return {
    check: (value: unknown): value is Static<S> => validator.Check(value),
    problem: (value) => {
      const [first] = validator.Errors(value);
      return first ? `${first.instancePath || '/'} ${first.message}` : 'of another shape';
    },
  };
}
