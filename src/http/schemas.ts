import { Type } from '@fastify/type-provider-typebox';
import { MAX_USD_AMOUNT } from '../domain/money.ts';
import { auditActions } from '../domain/audit-entry.ts';
import { usageModalities } from '../domain/usage-modalities.ts';

/** Request-shape pieces shared by the account and admin APIs, and the model path of every surface's model reads. */
export const UsdCap = Type.Number({ minimum: 0, maximum: MAX_USD_AMOUNT });
export const SignedUsd = Type.Number({ minimum: -MAX_USD_AMOUNT, maximum: MAX_USD_AMOUNT });
export const Email = Type.String({ format: 'email', minLength: 3, maxLength: 254 });
export const Password = Type.String({ minLength: 8, maxLength: 256 });
/** PostgreSQL text cannot hold U+0000, so free text bound for a column refuses it here (400, not a 500 from the insert). */
export const StoredText = (options: { minLength?: number; maxLength: number }) =>
  Type.String({ ...options, pattern: '^[^\\u0000]*$' });
/** At least one non-space character and no U+0000; written so the regex runs in linear time. */
export const KeyName = Type.String({ minLength: 1, maxLength: 100, pattern: '^\\s*[^\\s\\u0000][^\\u0000]*$' });
/**
 * Text with something in it: a character that is neither white space (Unicode's included: what `trim()` removes)
 * nor invisible without being white space: the default-ignorable code points of the Basic Multilingual Plane
 * (soft hyphen, zero-width space and joiners, bidirectional and word-joining controls, the Hangul fillers,
 * variation selectors...) and the blank braille pattern, which draws nothing. Written with `\\uXXXX` escapes
 * only, not `\\p{...}`, so the OpenAPI document's pattern compiles in every client generator's regex dialect
 * (Python's `re`, Java's); the default-ignorables past that plane (tags) pass. The pattern is searched for, not
 * anchored, so the check runs in linear time; a refusal reads as that rule.
 */
export const nonBlankPattern =
  '[^\\s\\u00AD\\u034F\\u061C\\u115F\\u1160\\u17B4\\u17B5\\u180B-\\u180F\\u200B-\\u200F\\u202A-\\u202E\\u2060-\\u206F\\u2800\\u3164\\uFE00-\\uFE0F\\uFEFF\\uFFA0\\uFFF0-\\uFFF8]';
export const NonBlankText = (options: { minLength?: number; maxLength: number }) =>
  Type.String({ ...options, pattern: nonBlankPattern });
export const Identifier = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9_-]+$' });

const nullableCap = Type.Optional(Type.Union([UsdCap, Type.Null()]));
export const LimitsPatch = Type.Object(
  { daily: nullableCap, weekly: nullableCap, monthly: nullableCap, total: nullableCap },
  { additionalProperties: false, minProperties: 1 },
);

export const NewKeyLimits = Type.Object(
  {
    daily: Type.Optional(UsdCap),
    weekly: Type.Optional(UsdCap),
    monthly: Type.Optional(UsdCap),
    total: Type.Optional(UsdCap),
  },
  { additionalProperties: false },
);

/** A rate limit: a whole number of requests, tokens or requests in flight (int4 column, so at most a billion). */
const RateLimit = Type.Integer({ minimum: 1, maximum: 1_000_000_000 });
const nullableRateLimit = Type.Optional(Type.Union([RateLimit, Type.Null()]));
export const NewKeyRateLimits = Type.Object(
  {
    requestsPerMinute: Type.Optional(RateLimit),
    tokensPerMinute: Type.Optional(RateLimit),
    concurrentRequests: Type.Optional(RateLimit),
  },
  { additionalProperties: false },
);
/** Rate limits to change; `null` removes one (a key's then falls back to its account's), an absent one is left alone. */
export const RateLimitsPatch = Type.Object(
  { requestsPerMinute: nullableRateLimit, tokensPerMinute: nullableRateLimit, concurrentRequests: nullableRateLimit },
  { additionalProperties: false, minProperties: 1 },
);

export const NewKeyBody = Type.Object(
  { name: KeyName, limits: Type.Optional(NewKeyLimits), rateLimits: Type.Optional(NewKeyRateLimits) },
  { additionalProperties: false },
);
export const KeyPatchBody = Type.Object(
  { name: Type.Optional(KeyName), isActive: Type.Optional(Type.Boolean()) },
  { additionalProperties: false, minProperties: 1 },
);
export const KeyIdParams = Type.Object({ keyId: Identifier });
/** A catalog model id as the rest of a path (`/models/*`): ids may contain slashes, and the router has decoded it. */
export const ModelIdPath = Type.Object({
  '*': Type.String({ maxLength: 300, description: 'A catalog model id (it may contain slashes)' }),
});

/** The operator's new account (admin API and `gateway accounts create`). */
export const NewAccountBody = Type.Object(
  { email: Email, password: Type.Optional(Password), credits: Type.Optional(UsdCap) },
  { additionalProperties: false },
);
/**
 * The password the operator sets on an account (admin API, operator console, `gateway accounts set-password`):
 * the rules of signup's.
 */
export const PasswordBody = Type.Object({ password: Password }, { additionalProperties: false });
/** A credit grant or removal (admin API and `gateway credits add`). */
export const CreditGrantBody = Type.Object(
  { amount: SignedUsd, note: Type.Optional(StoredText({ maxLength: 500 })) },
  { additionalProperties: false },
);

/** `offset` and `limit` of a paged listing (the spec's usage paging: offset 0 and limit 20 by default). */
export const PageQueryFields = (maxPageSize: number) => ({
  offset: Type.Integer({ minimum: 0, maximum: 1_000_000_000, default: 0 }),
  limit: Type.Integer({ minimum: 1, maximum: maxPageSize, default: 20 }),
});

/** A page of usage records, filtered by key, model and modality: the account's own listing and the operator's. */
export const UsageQuery = (maxPageSize: number) =>
  Type.Object(
    {
      ...PageQueryFields(maxPageSize),
      apiKeyId: Type.Optional(Identifier),
      model: Type.Optional(StoredText({ minLength: 1, maxLength: 300 })),
      modality: Type.Optional(Type.Enum(usageModalities)),
    },
    { additionalProperties: false },
  );

const Moment = (description: string) => Type.Optional(Type.String({ format: 'date-time', description }));

/** The filters of the audit log both the operator and an account have: the action and a time range. */
const auditFilterFields = (maxPageSize: number) => ({
  ...PageQueryFields(maxPageSize),
  action: Type.Optional(Type.Enum(auditActions)),
  since: Moment('Entries from this moment on (ISO 8601, inclusive)'),
  until: Moment('Entries before this moment (ISO 8601, exclusive)'),
});

/** An account's page of its own audit log. */
export const AccountAuditQuery = (maxPageSize: number) =>
  Type.Object(auditFilterFields(maxPageSize), { additionalProperties: false });

/** The operator's page of the audit log: also by who acted, by the account concerned and by request. */
export const AuditQuery = (maxPageSize: number) =>
  Type.Object(
    {
      ...auditFilterFields(maxPageSize),
      actor: Type.Optional(
        Type.String({
          minLength: 1,
          maxLength: 100,
          pattern: '^[A-Za-z0-9_-]+$',
          description: '`operator`, or the id of the account or of the key that made the change',
        }),
      ),
      accountId: Type.Optional(Identifier),
      requestId: Type.Optional(Type.String({ pattern: '^[A-Za-z0-9._:-]{1,128}$' })),
    },
    { additionalProperties: false },
  );
