import type { Static, TSchema } from '@fastify/type-provider-typebox';

type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

/**
 * True when a documented schema describes exactly a type the code answers with: each is assignable to the
 * other and they name the same fields. Used as `Holds<SchemaAgrees<typeof Schema, View>>`, so a view that
 * changes without its documentation (or the reverse) no longer compiles.
 */
export type SchemaAgrees<S extends TSchema, T> =
  Same<Static<S>, T> extends true ? Same<keyof Static<S>, keyof T> : false;

/** Compiles only when given `true`. */
export type Holds<T extends true> = T;
