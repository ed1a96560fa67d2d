/**
 * An entry of the audit log: who changed what (its state before and after), when, from which address and in
 * which request. The JSON an entry stores is described here once and checked when written and when read.
 */

import Type, { type Static } from 'typebox';
import { storedCheck } from './stored-check.ts';

/** `operator`: the admin token, the CLI or an operator account's console; `account`: a session of the account or one of its keys. */
export const auditActorKinds = ['operator', 'account'] as const;
export type AuditActorKind = (typeof auditActorKinds)[number];

/** What a change is made to. A session is named by its account only: its id and token are secrets. */
export const auditSubjectTypes = [
  'account',
  'api-key',
  'session',
  'media-job',
  'config',
  'model',
  'provider-key',
  'provider-row',
] as const;
export type AuditSubjectType = (typeof auditSubjectTypes)[number];

/** Every change the log records, by name. */
export const auditActions = [
  'account.create',
  'account.signup',
  'account.credits',
  'account.rate-limits',
  'account.role',
  'account.disable',
  'account.enable',
  'account.password',
  'api-key.create',
  'api-key.update',
  'api-key.spend-caps',
  'api-key.rate-limits',
  'api-key.revoke',
  'media-job.cancel',
  'config.reload',
  'config.secret-adopt',
  'provider-row.test',
  'catalog.model.put',
  'catalog.model.delete',
  'catalog.model.disable',
  'catalog.model.enable',
  'catalog.price.set',
  'provider-key.create',
  'provider-key.update',
  'provider-key.delete',
  'session.sign-in',
  'session.sign-out',
  'webhook.create',
  'webhook.update',
  'webhook.delete',
  'webhook.rotate-secret',
  'webhook.test',
  'account.balance-alert',
] as const;
export type AuditAction = (typeof auditActions)[number];

const actionNames: ReadonlySet<string> = new Set(auditActions);
export function isAuditAction(name: string): name is AuditAction {
  return actionNames.has(name);
}

export type AuditActor =
  /** `accountId`: the operator account whose session acted in the operator console (absent: admin token or CLI). */
  | { kind: 'operator'; accountId?: string }
  /** `apiKeyId` when the account acted through one of its keys, absent for a session. */
  | { kind: 'account'; accountId: string; apiKeyId?: string };

const Usd = Type.Number();
const RateLimits = Type.Object(
  {
    requestsPerMinute: Type.Optional(Type.Integer()),
    tokensPerMinute: Type.Optional(Type.Integer()),
    concurrentRequests: Type.Optional(Type.Integer()),
  },
  { additionalProperties: false },
);

/** What the log keeps of an account: never its password's hash. */
export const AccountStateSchema = Type.Object(
  {
    email: Type.String(),
    creditBalance: Usd,
    rateLimits: RateLimits,
    role: Type.Optional(Type.Union([Type.Literal('user'), Type.Literal('operator')])),
    disabled: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, description: 'An account as it stood' },
);

/** What the log keeps of a key: never the key, its hash or its sealed copy. */
export const ApiKeyStateSchema = Type.Object(
  {
    accountId: Type.String(),
    name: Type.String(),
    prefix: Type.String(),
    isActive: Type.Boolean(),
    revoked: Type.Boolean(),
    limits: Type.Object(
      {
        daily: Type.Optional(Usd),
        weekly: Type.Optional(Usd),
        monthly: Type.Optional(Usd),
        total: Type.Optional(Usd),
      },
      { additionalProperties: false },
    ),
    rateLimits: RateLimits,
  },
  { additionalProperties: false, description: 'An API key as it stood, without the key itself' },
);

/** What the log keeps of a media job: whose, what, and its state (not its request, which may hold media). */
export const MediaJobStateSchema = Type.Object(
  { accountId: Type.String(), kind: Type.String(), model: Type.String(), state: Type.String() },
  { additionalProperties: false, description: 'A media job as it stood' },
);

/** What a configuration reload changed: the diff it answered and logged (setting names only, never a key). */
export const ConfigChangeStateSchema = Type.Object(
  { configDiff: Type.Record(Type.String(), Type.Unknown()) },
  { additionalProperties: false, description: 'What a reload of gateway.yaml changed' },
);

/**
 * What the log keeps of a catalog model: where its entry comes from, whether it is switched on, the entry as it
 * serves (gateway.yaml's shape: no credential lives in a model entry) and its price version.
 */
export const ModelStateSchema = Type.Object(
  {
    source: Type.Union([Type.Literal('file'), Type.Literal('runtime')]),
    active: Type.Boolean(),
    entry: Type.Record(Type.String(), Type.Unknown()),
    priceVersion: Type.Optional(Type.String()),
  },
  { additionalProperties: false, description: 'A catalog model as it stood' },
);

/** What the log keeps of a provider's upstream key: never the key or its sealed copy, at most its last 4 characters. */
export const ProviderKeyStateSchema = Type.Object(
  {
    providerId: Type.String(),
    label: Type.Optional(Type.String()),
    weight: Type.Integer(),
    isActive: Type.Boolean(),
    keyEnding: Type.String(),
  },
  { additionalProperties: false, description: "A provider's upstream key as it stood, without the key itself" },
);

export const AuditStateSchema = Type.Union([
  AccountStateSchema,
  ApiKeyStateSchema,
  MediaJobStateSchema,
  ConfigChangeStateSchema,
  ModelStateSchema,
  ProviderKeyStateSchema,
]);
export type AuditState = Static<typeof AuditStateSchema>;

/** The body of the request that made the change, its secrets left out (see `withoutSecrets`). */
export const AuditRequestSchema = Type.Record(Type.String(), Type.Unknown(), {
  description: 'The body of the request that made the change, without passwords, keys or tokens',
});
export type AuditRequest = Static<typeof AuditRequestSchema>;

export const auditStateCheck = storedCheck(AuditStateSchema);
export const auditRequestCheck = storedCheck(AuditRequestSchema);

/**
 * Whether a field's value is a secret wherever it appears in a request body: its name, with case, `_` and `-`
 * set aside, ends in password, key, token, secret or session id (`newPassword`, `api_key`, `refresh-token`), or
 * is an authorization or a cookie. An id naming a key (`keyId`) is not one.
 */
const secretField = /(password|key|token|secret|sessionid)$|^(authorization|cookie)$/;
const isSecretField = (field: string) => secretField.test(field.toLowerCase().replace(/[_-]/g, ''));

/** `value` without any field named as a secret, at any depth: what the log may keep of a request body. */
export function withoutSecrets(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutSecrets);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([field]) => !isSecretField(field))
      .map(([field, inner]) => [field, withoutSecrets(inner)]),
  );
}

/** What the log keeps of a request body: the body without its secrets, or null when nothing is left. */
export function recordableRequest(body: unknown): AuditRequest | null {
  const kept = withoutSecrets(body);
  return auditRequestCheck.check(kept) && Object.keys(kept).length > 0 ? kept : null;
}

/** One entry as written. */
export interface NewAuditEntry {
  actor: AuditActor;
  action: AuditAction;
  /** The account the change concerns (the owner of a key), which can list the entry. */
  accountId: string | null;
  subject: { type: AuditSubjectType; id: string | null };
  before: AuditState | null;
  after: AuditState | null;
  request: AuditRequest | null;
  clientAddress: string | null;
  requestId: string | null;
}

/** One entry as read back. */
export interface AuditEntry extends NewAuditEntry {
  id: string;
  createdAt: Date;
}
