import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { providerRowsExample, rowTestExample, rowTestResultExample } from './operator-examples.ts';
import { RowTestBody } from './operator-requests.ts';
import { ProviderRowSchema, RowTestResultSchema } from './operator-schemas.ts';

/** The services this part of the surface uses. */
export type OperatorProviderServices = Pick<GatewayServices, 'providerRows'>;

/** The provider rows' health and "test this row". Registered behind the operator API's authentication. */
export const operatorProviderRoutes: FastifyPluginAsyncTypebox<{ services: OperatorProviderServices }> = async (
  app,
  { services },
) => {
  app.get(
    '/v1/providers',
    {
      schema: {
        summary: 'Provider rows and their health',
        description:
          "Every provider row of the catalog with the models it serves, its breaker's state, and its error rate and p50/p95 latency over the last minutes, from the counters of the process that answers (each process keeps its own).",
        response: { 200: Type.Array(ProviderRowSchema) },
        documentedExample: { answer: providerRowsExample },
      },
    },
    async () => services.providerRows.list(),
  );

  app.post(
    '/v1/providers/test',
    {
      config: { audit: { action: 'provider-row.test', subject: { type: 'provider-row', from: 'answer' } } },
      schema: {
        summary: 'Test a provider row',
        description:
          "Sends one small real request straight to the row (a one-line text completion of at most 8 tokens, or the embedding of one word) and answers whether it worked and how long it took. Nothing is held or billed to any account, and neither the row's breaker nor its health figures count it. A media row is not tested (400): its smallest request is a real generation.",
        body: RowTestBody,
        response: { 200: RowTestResultSchema },
        documentedExample: { request: rowTestExample, answer: rowTestResultExample },
      },
    },
    async (request) => services.providerRows.test(request.body.providerId, request.body.upstreamModel),
  );
};
