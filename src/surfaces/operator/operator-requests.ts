import { Type } from '@fastify/type-provider-typebox';
import { Identifier, PageQueryFields, SignedUsd, StoredText } from '../../http/schemas.ts';

/** What the operator API takes: its paths, queries and bodies. */

export const AccountParams = Type.Object({ accountId: Identifier });

export const AccountSearchQuery = (maxPageSize: number) =>
  Type.Object(
    {
      ...PageQueryFields(maxPageSize),
      email: Type.Optional(StoredText({ minLength: 1, maxLength: 254 })),
    },
    { additionalProperties: false },
  );

/** A reason the audit log and the ledger keep: at least one character that is not a space. */
const Reason = Type.String({
  minLength: 1,
  maxLength: 500,
  pattern: '^\\s*[^\\s\\u0000][^\\u0000]*$',
  description: 'Why: kept with the grant in the ledger and in the audit log',
});

export const CreditAdjustmentBody = Type.Object(
  {
    amount: { ...SignedUsd, description: 'USD to add; negative removes (never below a zero balance)' },
    reason: Reason,
  },
  { additionalProperties: false },
);

export const OperatorKeyPatchBody = Type.Object(
  { isActive: Type.Boolean({ description: 'false disables the key (401 on every surface) until it is enabled' }) },
  { additionalProperties: false },
);

const Moment = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }));

/** The filters of usage across accounts (the page and the CSV export). */
const usageFilterFields = {
  accountId: Type.Optional(Identifier),
  apiKeyId: Type.Optional(Identifier),
  model: Type.Optional(StoredText({ minLength: 1, maxLength: 300 })),
  providerId: Type.Optional(StoredText({ minLength: 1, maxLength: 300 })),
  upstreamModel: Type.Optional(StoredText({ minLength: 1, maxLength: 300 })),
  status: Type.Optional(StoredText({ minLength: 1, maxLength: 50 })),
  since: Moment('Records from this moment on (ISO 8601, inclusive)'),
  until: Moment('Records before this moment (ISO 8601, exclusive)'),
};

export const UsageSearchQuery = (maxPageSize: number) =>
  Type.Object({ ...PageQueryFields(maxPageSize), ...usageFilterFields }, { additionalProperties: false });

export const UsageExportQuery = Type.Object(usageFilterFields, { additionalProperties: false });

export const RowTestBody = Type.Object(
  {
    providerId: StoredText({ minLength: 1, maxLength: 300 }),
    upstreamModel: StoredText({ minLength: 1, maxLength: 300 }),
  },
  { additionalProperties: false },
);
