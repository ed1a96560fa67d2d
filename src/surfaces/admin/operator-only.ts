import type { onRequestAsyncHookHandler } from 'fastify';
import { GatewayError } from '../../domain/errors.ts';
import type { Secret } from '../../domain/secret.ts';
import { actAsOperator } from '../../http/audit-hook.ts';
import { bearerToken, sameSecret } from '../../http/secrets.ts';

/**
 * The admin API's door, for each of its plugins: open only when GATEWAY_ADMIN_TOKEN is set (otherwise every
 * path answers 404), and only to `Authorization: Bearer <token>`; the request is then the operator's.
 */
export function operatorOnly(adminToken: Secret | undefined): onRequestAsyncHookHandler {
  return async (request) => {
    if (!adminToken)
      throw new GatewayError('GW_ROUTE_NOT_FOUND', `route ${request.method} ${request.url.split('?')[0]} not found`);
    const token = bearerToken(request.headers.authorization);
    if (token === undefined || !sameSecret(token, adminToken))
      throw new GatewayError('GW_UNAUTHENTICATED', 'the admin API needs Authorization: Bearer <GATEWAY_ADMIN_TOKEN>');
    actAsOperator(request);
  };
}
