import { Readable } from 'node:stream';
import type { FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { UsageSearchFilter } from '../../billing/usage-search.ts';
import type { GatewayServices } from '../../gateway/services.ts';
import type { DescribedContent } from '../../http/openapi/route-documentation.ts';
import { usageCsvExample, usageSearchPageExample } from './operator-examples.ts';
import { UsageExportQuery, UsageSearchQuery } from './operator-requests.ts';
import { UsageSearchPageSchema } from './operator-schemas.ts';

/** Typed as documentation only, so the handler may send a stream. */
const csvAnswer: DescribedContent = {
  description: 'CSV (RFC 4180), a header line first',
  content: { 'text/csv': { schema: { type: 'string' } } },
};

/** The services this part of the surface uses. */
export type OperatorUsageServices = Pick<GatewayServices, 'config' | 'usageSearch'>;

/** The query's filters as the repository takes them: moments as dates (the schema checked they are ISO 8601). */
function filterOf(
  query: Omit<UsageSearchFilter, 'since' | 'until'> & { since?: string; until?: string },
): UsageSearchFilter {
  const { since, until, ...rest } = query;
  return {
    ...rest,
    ...(since === undefined ? {} : { since: new Date(since) }),
    ...(until === undefined ? {} : { until: new Date(until) }),
  };
}

/** Usage across accounts, for the operator console. Registered behind the operator API's authentication. */
export const operatorUsageRoutes: FastifyPluginAsyncTypebox<{ services: OperatorUsageServices }> = async (
  app,
  { services },
) => {
  app.get(
    '/v1/usage',
    {
      schema: {
        summary: 'Usage across accounts, with totals',
        description:
          'One page of usage records of every account, newest first, each with its route, filtered by account, key, model, provider row (`providerId`, `upstreamModel`), status and time range; `totals` covers every record the filter matches.',
        querystring: UsageSearchQuery(services.config.usage.maxPageSize),
        response: { 200: UsageSearchPageSchema },
        documentedExample: { answer: usageSearchPageExample },
      },
    },
    async (request) => {
      const { offset, limit, ...filter } = request.query;
      return services.usageSearch.page(filterOf(filter), { offset, limit });
    },
  );

  app.get(
    '/v1/usage.csv',
    {
      schema: {
        summary: 'Usage across accounts, as CSV',
        description:
          "Every record the filters match (as `GET /usage` takes them), newest first, as CSV with a header line. The answer streams as the database is read page by page, whatever its size. A cell that starts with `=`, `+`, `-` or `@` is prefixed with `'` so that a spreadsheet reads it as text.",
        querystring: UsageExportQuery,
        response: {
          200: csvAnswer,
        },
        documentedExample: { answer: usageCsvExample },
      },
    },
    async (request, reply) =>
      reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', 'attachment; filename="usage.csv"')
        .send(Readable.from(services.usageSearch.csv(filterOf(request.query)))),
  );
};
