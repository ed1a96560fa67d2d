import type { FastifyReply } from 'fastify';
import type { TObject } from 'typebox';
import { GatewayError } from '../domain/errors.ts';

/**
 * Names, in a response header, the parameters the call went ahead without (a warning, never a silent drop).
 * A client names unknown fields as it likes: each name is percent-encoded (a plain name is unchanged), so
 * none can break the header or the list.
 */
export function reportDroppedParameters(reply: FastifyReply, names: readonly string[]): void {
  if (names.length > 0) reply.header('x-gateway-dropped-parameters', names.map(encodeURIComponent).join(','));
}

/** Most fields a request may carry that its protocol does not describe: each may end up named in the header. */
const maxUnnamedFields = 64;
const none: readonly string[] = [];

/**
 * The fields of a request body that its protocol's schema does not name. The schemas keep unnamed fields, so
 * a request relayed to an upstream of its own protocol carries them as sent; the canonical request has no place
 * for them, so a translated one goes without them and says so (`x-gateway-dropped-parameters`). More than the
 * header should name are refused with 400. Nothing is allocated for a body that has none.
 */
export function unnamedFields(body: Readonly<Record<string, unknown>>, schema: TObject): readonly string[] {
  let unnamed: string[] | undefined;
  for (const field in body) {
    if (Object.hasOwn(schema.properties, field) || body[field] === undefined || body[field] === null) continue;
    unnamed ??= [];
    unnamed.push(field);
  }
  if (unnamed && unnamed.length > maxUnnamedFields)
    throw new GatewayError(
      'GW_VALIDATION',
      `the body has ${unnamed.length} top-level fields the protocol does not describe (at most ${maxUnnamedFields})`,
    );
  return unnamed ?? none;
}
