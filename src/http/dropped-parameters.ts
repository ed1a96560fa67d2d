import type { FastifyReply } from 'fastify';

/** Names, in a response header, the parameters the call went ahead without (a warning, never a silent drop). */
export function reportDroppedParameters(reply: FastifyReply, names: readonly string[]): void {
  if (names.length > 0) reply.header('x-gateway-dropped-parameters', names.join(','));
}
