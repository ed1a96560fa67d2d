import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../gateway/services.ts';
import { AuditPageSchema } from './answer-schemas.ts';
import { auditMoments } from './audit-hook.ts';
import { auditPageExample } from './examples.ts';
import { noBody } from './openapi/route-documentation.ts';
import { AuditQuery, KeyIdParams } from './schemas.ts';

export interface OversightRouteOptions {
  services: Pick<GatewayServices, 'apiKeys' | 'audit' | 'config'>;
  /** What the audit log shows in this API (whose changes, named how). */
  auditLogDescription: string;
}

/**
 * What the admin API and the operator API both do over every account, one definition for both (each registers
 * it behind its own authentication): read the audit log, and revoke any key.
 */
export const oversightRoutes: FastifyPluginAsyncTypebox<OversightRouteOptions> = async (
  app,
  { services, auditLogDescription },
) => {
  app.get(
    '/v1/audit-log',
    {
      schema: {
        summary: 'The audit log',
        description: auditLogDescription,
        querystring: AuditQuery(services.config.usage.maxPageSize),
        response: { 200: AuditPageSchema },
        documentedExample: { answer: auditPageExample },
      },
    },
    async (request) => {
      const { offset, limit, since, until, ...filter } = request.query;
      return services.audit.page({ ...filter, ...auditMoments({ since, until }) }, { offset, limit });
    },
  );

  app.delete(
    '/v1/api-keys/:keyId',
    {
      config: { audit: { action: 'api-key.revoke', subject: { type: 'api-key', from: 'path' } } },
      schema: {
        summary: 'Revoke a key',
        description: 'For good: unlike a disabled key, a revoked one cannot be enabled again.',
        params: KeyIdParams,
        response: { 204: noBody('Revoked: the key answers 401 from now on') },
      },
    },
    async (request, reply) => {
      await services.apiKeys.revoke(null, request.params.keyId);
      return reply.code(204).send();
    },
  );
};
