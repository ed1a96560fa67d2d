import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { AuditPageSchema } from '../../http/answer-schemas.ts';
import { auditMoments } from '../../http/audit-hook.ts';
import { principalOf } from '../../http/authentication.ts';
import { AccountAuditQuery } from '../../http/schemas.ts';
import { ownAuditPageExample } from './account-examples.ts';

/** The services this surface uses, and only those. */
export type AuditServices = Pick<GatewayServices, 'audit' | 'config'>;

/** The account's own audit log: the changes made to it and its keys. Registered behind the account API's authentication. */
export const auditRoutes: FastifyPluginAsyncTypebox<{ services: AuditServices }> = async (app, { services }) => {
  app.get(
    '/audit-log',
    {
      schema: {
        summary: "The account's audit log, newest first",
        description:
          "One page of the changes made to the account and its keys (credit, keys, caps, rate limits, sign-in and sign-out), by the account itself or by the operator: who made each, its state before and after, when, and in which request (the address for the account's own changes). Filtered by action and time range.",
        querystring: AccountAuditQuery(services.config.usage.maxPageSize),
        response: { 200: AuditPageSchema },
        documentedExample: { answer: ownAuditPageExample },
      },
    },
    async (request) => {
      const { offset, limit, since, until, action } = request.query;
      return services.audit.accountPage(
        principalOf(request).accountId,
        { action, ...auditMoments({ since, until }) },
        { offset, limit },
      );
    },
  );
};
