import type { Static } from '@fastify/type-provider-typebox';
import type { AuditPageSchema } from '../../http/answer-schemas.ts';
import { accountExample, apiKeyExample, limitsPatchExample, listedKeysExample } from '../../http/examples.ts';

export { listedKeysExample };
import type { DailySpendSchema, MediaPageSchema, PricedModelSchema } from './account-schemas.ts';

/** Examples of the account API's own answers, as the OpenAPI document shows them (typed by their schemas). */

export const dailySpendExample: Static<typeof DailySpendSchema> = {
  from: '2026-02-01',
  to: '2026-03-02',
  spend: [
    { date: '2026-03-01', model: 'gpt-4o-mini', usdCost: 0.84, generations: 212 },
    { date: '2026-03-02', model: 'gpt-image-1', usdCost: 1.68, generations: 4 },
  ],
};

export const mediaPageExample: Static<typeof MediaPageSchema> = {
  results: [
    {
      generationId: 'gen_9a1c3e5b7d2f4a6c8e0b1d3f5a7c9e2b',
      kind: 'image',
      model: 'gpt-image-1',
      createdAt: '2026-03-02T11:20:05.000Z',
      prompt: 'A lighthouse at dawn, watercolour',
      outputs: [
        {
          assetId: 'asset_4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a4c',
          mediaType: 'image/png',
          bytes: 1482331,
          downloadUrl:
            'https://gateway.example.com/api/v1/media/files/images/gen_9a1c3e5b7d2f4a6c8e0b1d3f5a7c9e2b/0.png?expires=1772456405&signature=3q2-7w',
        },
      ],
    },
  ],
  total: 1,
  offset: 0,
  limit: 20,
};

export const pricedModelsExample: Array<Static<typeof PricedModelSchema>> = [
  {
    modelId: 'gpt-4o-mini',
    name: 'GPT-4o mini',
    inputModalities: ['text', 'image'],
    outputModalities: ['text'],
    maxOutputTokens: 16384,
    pricing: { inputPerMTok: 0.15, outputPerMTok: 0.6 },
  },
];

const keyState = {
  accountId: accountExample.id,
  name: apiKeyExample.name,
  prefix: apiKeyExample.prefix,
  isActive: true,
  revoked: false,
  rateLimits: apiKeyExample.rateLimits,
};

/** The account's own change of a key's caps, as its audit log lists it. */
export const ownAuditPageExample: Static<typeof AuditPageSchema> = {
  results: [
    {
      id: 'audit_2a4c6e8f0b1d3f5a7c9e1b3d5f7a9c0e',
      createdAt: '2026-03-02T12:41:55.118Z',
      action: 'api-key.spend-caps',
      actor: { kind: 'account', accountId: accountExample.id },
      accountId: accountExample.id,
      subject: { type: 'api-key', id: apiKeyExample.id },
      before: { ...keyState, limits: { daily: 5, weekly: 20 } },
      after: { ...keyState, limits: { daily: 10 } },
      request: { ...limitsPatchExample },
      clientAddress: '198.51.100.23',
      requestId: '0b9e7c5a-3d1f-4e2a-8c6b-5f4e3d2c1b0a',
    },
  ],
  total: 1,
  offset: 0,
  limit: 20,
};
