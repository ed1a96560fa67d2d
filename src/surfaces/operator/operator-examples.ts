import type { Static } from '@fastify/type-provider-typebox';
import { accountExample, apiKeyExample, generationRecordExample, listedKeysExample } from '../../http/examples.ts';
import type { CreditAdjustmentBody, RowTestBody } from './operator-requests.ts';
import type {
  OperatorAccountDetailSchema,
  OperatorAccountPageSchema,
  OperatorAccountSchema,
  ProviderRowSchema,
  RowTestResultSchema,
  UsageSearchPageSchema,
} from './operator-schemas.ts';

export const operatorAccountExample: Static<typeof OperatorAccountSchema> = {
  ...accountExample,
  disabled: false,
  keyCount: 2,
  createdAt: '2026-02-11T09:14:02.118Z',
};

export const operatorAccountPageExample: Static<typeof OperatorAccountPageSchema> = {
  results: [operatorAccountExample],
  total: 1,
  offset: 0,
  limit: 20,
};

export const operatorAccountDetailExample: Static<typeof OperatorAccountDetailSchema> = {
  ...operatorAccountExample,
  held: 0.004,
  spent: 63.2,
  generations: 1874,
};

export const creditAdjustmentExample: Static<typeof CreditAdjustmentBody> = {
  amount: 25,
  reason: 'Refund of the 2 March outage',
};

export const operatorKeysExample = listedKeysExample;

export const usageSearchPageExample: Static<typeof UsageSearchPageSchema> = {
  results: [
    {
      ...generationRecordExample,
      route: { providerId: 'openai', upstreamModel: 'gpt-4o-mini', fallbacks: [], firstByteMs: 412 },
    },
  ],
  total: 1874,
  offset: 0,
  limit: 20,
  totals: { generations: 1874, usdCost: 63.2 },
};

export const usageCsvExample =
  'createdAt,id,accountId,apiKeyId,model,modality,status,usdCost,durationMs,providerId,upstreamModel,usage\r\n' +
  `2026-03-02T10:04:31.512Z,${generationRecordExample.id},${accountExample.id},${apiKeyExample.id},gpt-4o-mini,text,succeeded,0.0000306,1840,openai,gpt-4o-mini,"{""inputTokens"":12,""outputTokens"":48}"\r\n`;

export const providerRowsExample: Array<Static<typeof ProviderRowSchema>> = [
  {
    providerId: 'openai',
    upstreamModel: 'gpt-4o-mini',
    protocol: 'openai',
    models: ['gpt-4o-mini'],
    breaker: 'closed',
    health: { attempts: 240, failures: 3, errorRate: 0.0125, p50Ms: 380, p95Ms: 1210, windowSeconds: 300 },
    testable: 'text',
  },
];

/** The shipped gateway.yaml's sandbox text row: the example a reader can send as is. */
export const rowTestExample: Static<typeof RowTestBody> = { providerId: 'sandbox', upstreamModel: 'echo' };

export const rowTestResultExample: Static<typeof RowTestResultSchema> = {
  id: 'sandbox/echo',
  providerId: 'sandbox',
  upstreamModel: 'echo',
  kind: 'text',
  ok: true,
  latencyMs: 3,
  sample: 'Reply with the single word: pong',
};
