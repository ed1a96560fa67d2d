import type { Static, TSchema } from 'typebox';
import { classifyError } from '../../src/http/error-envelope.ts';
import { bodyValidator, type UnknownFields } from '../../src/http/validation.ts';

/**
 * A body as a route whose body schema is `schema` takes it, without a gateway: the body as the route's handler
 * gets it (defaults filled; undeclared fields stripped, as the generation surfaces do, or refused, as the
 * management APIs do: `unknownFields`), or the messages of its 400 (the error envelope's
 * `errors`, naming each field as the client spelled it). The check is the one a route's own schema runs
 * (`bodyValidator` compiles with the route compiler's options) and the messages are the envelope's
 * (`classifyError`).
 */
export function checkedBody<S extends TSchema>(
  schema: S,
  body: unknown,
  unknownFields: UnknownFields = 'strip',
): { body: Static<S>; errors?: undefined } | { errors: string[] } {
  try {
    // Ajv keeps what it compiled by schema, so each schema is compiled once however often it is checked.
    return { body: bodyValidator(schema, 'body', unknownFields)(structuredClone(body)) };
  } catch (error) {
    const { status, messages } = classifyError(error, 0);
    if (status !== 400) throw error;
    return { errors: messages };
  }
}

/** The messages of the 400 a route whose body schema is `schema` answers `body` with; `[]` when it passes. */
export function bodyErrors(schema: TSchema, body: unknown, unknownFields: UnknownFields = 'strip'): string[] {
  return checkedBody(schema, body, unknownFields).errors ?? [];
}
