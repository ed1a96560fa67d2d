import type { FastifyReply } from 'fastify';
import type { TObject } from 'typebox';

/** Names, in a response header, the parameters the call went ahead without (a warning, never a silent drop). */
export function reportDroppedParameters(reply: FastifyReply, names: readonly string[]): void {
  if (names.length > 0) reply.header('x-gateway-dropped-parameters', names.join(','));
}

/**
 * The fields of a request body that its protocol's schema does not name. The schemas keep unnamed fields, so
 * a request relayed to an upstream of its own protocol carries them as sent; the canonical request has no place
 * for them, so a translated one goes without them and says so (`x-gateway-dropped-parameters`).
 */
export function unnamedFields(body: object, schema: TObject): string[] {
  return Object.keys(body).filter((field) => !Object.hasOwn(schema.properties, field));
}
