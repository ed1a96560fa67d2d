import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { AccountSchema } from '../../http/answer-schemas.ts';
import { accountExample } from '../../http/examples.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { Identifier, PasswordBody } from '../../http/schemas.ts';

/** The services these routes use. */
export type AdminAccountServices = Pick<GatewayServices, 'accounts'>;

const RoleBody = Type.Object(
  {
    role: Type.Union([Type.Literal('user'), Type.Literal('operator')], {
      description: '`operator` opens the operator console and its API to the account; `user` closes them',
    }),
  },
  { additionalProperties: false },
);

/** The account's role and password, set with the admin token. Registered inside the admin API, behind its token check. */
export const adminAccountRoutes: FastifyPluginAsyncTypebox<{ services: AdminAccountServices }> = async (
  app,
  { services },
) => {
  app.patch(
    '/v1/accounts/:accountId',
    {
      config: { audit: { action: 'account.role', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: "Set an account's role",
        description:
          "`operator` grants the operator console (`/api/operator/v1` and the dashboard's Operator section) to the account's sessions, `user` takes it away; sessions already open follow from their next request, in every process.",
        params: Type.Object({ accountId: Identifier }),
        body: RoleBody,
        response: { 200: AccountSchema },
        documentedExample: { request: { role: 'operator' }, answer: { ...accountExample, role: 'operator' } },
      },
    },
    async (request) => services.accounts.setRole(request.params.accountId, request.body.role),
  );

  app.put(
    '/v1/accounts/:accountId/password',
    {
      config: { audit: { action: 'account.password', subject: { type: 'account', from: 'path' } } },
      schema: {
        summary: "Set an account's password",
        description:
          'Sets the password the account signs in with (8 to 256 characters, as at signup), whether it had one or not (an account made without a password gets one this way), and ends every session of the account, in every process. Its API keys keep working. The password is never answered, logged or kept in the audit log.',
        params: Type.Object({ accountId: Identifier }),
        body: PasswordBody,
        response: { 204: noBody("The password is set; the account's sessions ended") },
        documentedExample: { request: { password: 'a passphrase set by the operator' } },
      },
    },
    async (request, reply) => {
      await services.accounts.setPassword(request.params.accountId, request.body.password);
      return reply.code(204).send();
    },
  );
};
