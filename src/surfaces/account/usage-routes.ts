import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { principalOf } from '../../http/authentication.ts';
import { generationRecordExample, usagePageExample } from '../../http/examples.ts';
import { Identifier, UsageQuery } from '../../http/schemas.ts';
import { dailySpendExample } from './account-examples.ts';
import { DailySpendSchema, GenerationRecordSchema, UsagePageSchema } from './account-schemas.ts';

/** The services this surface uses, and only those. */
export type UsageServices = Pick<GatewayServices, 'config' | 'usage'>;

/** The account's usage history for the dashboard: records paged and filtered, one record, and spend per day. Registered behind the account API's authentication. */
export const usageRoutes: FastifyPluginAsyncTypebox<{ services: UsageServices }> = async (app, { services }) => {
  app.get(
    '/usage',
    {
      schema: {
        summary: "The account's usage records, newest first",
        description:
          'One page of generation records (model, status, cost, usage), filtered by key, model or modality when asked.',
        querystring: UsageQuery(services.config.usage.maxPageSize),
        response: { 200: UsagePageSchema },
        documentedExample: { answer: usagePageExample },
      },
    },
    async (request) => {
      const { offset, limit, apiKeyId, model, modality } = request.query;
      return services.usage.page(principalOf(request).accountId, { offset, limit, apiKeyId, model, modality });
    },
  );

  app.get(
    '/usage/daily',
    {
      schema: {
        summary: "The account's spend per day and model",
        description: 'What the account spent each day of the last `days` days (30 unless asked), per model, in USD.',
        querystring: Type.Object(
          { days: Type.Integer({ minimum: 1, maximum: 366, default: 30 }) },
          { additionalProperties: false },
        ),
        response: { 200: DailySpendSchema },
        documentedExample: { answer: dailySpendExample },
      },
    },
    async (request) => services.usage.daily(principalOf(request).accountId, request.query.days),
  );

  app.get(
    '/usage/:generationId',
    {
      schema: {
        summary: 'One usage record',
        description: "A generation record of the account, by its id (404 for another account's).",
        params: Type.Object({ generationId: Identifier }),
        response: { 200: GenerationRecordSchema },
        documentedExample: { answer: generationRecordExample },
      },
    },
    async (request) => services.usage.record(principalOf(request).accountId, request.params.generationId),
  );
};
