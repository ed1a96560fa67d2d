import type { Static } from '@fastify/type-provider-typebox';
import type {
  AccountSchema,
  ApiKeySchema,
  AuditEntrySchema,
  AuditPageSchema,
  BalanceSchema,
  CreatedKeySchema,
  GenerationRecordSchema,
  ListedKeySchema,
  RateLimitsSchema,
  UsagePageSchema,
} from './answer-schemas.ts';
import type {
  CreditGrantBody,
  KeyPatchBody,
  LimitsPatch,
  NewAccountBody,
  NewKeyBody,
  RateLimitsPatch,
} from './schemas.ts';

/**
 * Examples of the shared bodies and answers, as the OpenAPI document shows them beside their schemas (typed by them, so
 * an example that no longer fits its schema stops compiling).
 */

export const accountExample: Static<typeof AccountSchema> = {
  id: 'acct_3f9d1c0b6a2e4d7f8b5c9e1a2d3f4b6c',
  email: 'ada@example.com',
  creditBalance: 42.5,
  role: 'user',
};

export const balanceExample: Static<typeof BalanceSchema> = { creditBalance: 42.5 };

export const rateLimitsExample: Static<typeof RateLimitsSchema> = { requestsPerMinute: 60, concurrentRequests: 4 };

export const apiKeyExample: Static<typeof ApiKeySchema> = {
  id: 'key_8c2e5a7d1f3b4c6e9a0d2f4b6c8e1a3d',
  name: 'batch jobs',
  prefix: 'gwk_5Qx7',
  isActive: true,
  limits: { daily: 5, monthly: 100 },
  rateLimits: { requestsPerMinute: 30 },
  createdAt: '2026-03-02T09:15:00.000Z',
};

export const createdKeyExample: Static<typeof CreatedKeySchema> = {
  ...apiKeyExample,
  key: 'gwk_5Qx7mZ2pL9vR4tY8wK1nB6cH3jD0fS5a',
};

export const generationRecordExample: Static<typeof GenerationRecordSchema> = {
  id: 'gen_1b7e3c9a5d2f4e6a8c0b2d4f6a8c0e2b',
  userId: accountExample.id,
  apiKeyId: apiKeyExample.id,
  modality: 'text',
  model: 'gpt-4o-mini',
  status: 'succeeded',
  usage: { inputTokens: 12, outputTokens: 48 },
  usdCost: 0.0000306,
  durationMs: 1840,
  priceVersion: 'price_8f2d6a1c4e7b9d3f5a0c2e4b6d8f1a3c',
  createdAt: '2026-03-02T10:04:31.512Z',
};

export const usagePageExample: Static<typeof UsagePageSchema> = {
  results: [generationRecordExample],
  total: 1,
  offset: 0,
  limit: 20,
};

export const newKeyExample: Static<typeof NewKeyBody> = {
  name: 'batch jobs',
  limits: { daily: 5, monthly: 100 },
  rateLimits: { requestsPerMinute: 30 },
};

export const keyPatchExample: Static<typeof KeyPatchBody> = { name: 'nightly batch', isActive: false };

export const limitsPatchExample: Static<typeof LimitsPatch> = { daily: 10, weekly: null };

export const rateLimitsPatchExample: Static<typeof RateLimitsPatch> = { requestsPerMinute: 120, tokensPerMinute: null };

export const newAccountExample: Static<typeof NewAccountBody> = { email: 'ada@example.com', credits: 50 };

export const creditGrantExample: Static<typeof CreditGrantBody> = { amount: 25, note: 'March top-up' };

/** The operator's credit grant, as the audit log keeps it. */
export const auditEntryExample: Static<typeof AuditEntrySchema> = {
  id: 'audit_6d1f3b8e0a2c4e7f9b1d3a5c7e9f0b2d',
  createdAt: '2026-03-02T11:20:07.301Z',
  action: 'account.credits',
  actor: { kind: 'operator' },
  accountId: accountExample.id,
  subject: { type: 'account', id: accountExample.id },
  before: { email: accountExample.email, creditBalance: 17.5, rateLimits: {} },
  after: { email: accountExample.email, creditBalance: 42.5, rateLimits: {} },
  request: { ...creditGrantExample },
  clientAddress: '203.0.113.7',
  requestId: '6f1c2e4a-8b3d-4f5e-9a7c-1d2e3f4a5b6c',
};

export const auditPageExample: Static<typeof AuditPageSchema> = {
  results: [auditEntryExample],
  total: 1,
  offset: 0,
  limit: 20,
};

export const listedKeysExample: Array<Static<typeof ListedKeySchema>> = [
  {
    ...apiKeyExample,
    spend: {
      daily: { spent: 1.25, limit: 5, remaining: 3.75 },
      weekly: { spent: 4.1 },
      monthly: { spent: 18.6, limit: 100, remaining: 81.4 },
      total: { spent: 63.2 },
    },
  },
];
