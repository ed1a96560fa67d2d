import { Type, type FastifyPluginAsyncTypebox, type Static } from '@fastify/type-provider-typebox';
import type { GatewayServices } from '../../gateway/services.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import { operatorOnly } from './operator-only.ts';
import { refuseUnknownFields } from '../../http/validation.ts';

/** The services this plugin uses, and only those. */
export type ProviderKeyServices = Pick<GatewayServices, 'adminToken' | 'providerKeys'>;

const ProviderId = Type.String({
  minLength: 1,
  maxLength: 100,
  pattern: '^[A-Za-z0-9_-]+$',
  description: 'A provider id of gateway.yaml',
});
const KeyId = Type.String({ minLength: 1, maxLength: 100, pattern: '^[A-Za-z0-9._-]+$' });
const ProviderParams = Type.Object({ providerId: ProviderId });
const ProviderKeyParams = Type.Object({ providerId: ProviderId, keyId: KeyId });

const Label = Type.String({ minLength: 1, maxLength: 200, description: "The operator's name for the key" });
const Weight = Type.Integer({
  minimum: 0,
  maximum: 1_000_000,
  description: "The key's share of the provider's requests (0: only when no other key can be used)",
});

// Printable ASCII without spaces: anything else could not be sent in a header, or would split one.
const NewKeyBody = Type.Object(
  {
    key: Type.String({
      minLength: 8,
      maxLength: 1000,
      pattern: '^[\\x21-\\x7E]+$',
      description: 'The upstream key itself; stored sealed with the gateway secret and never shown again',
    }),
    label: Type.Optional(Label),
    weight: Type.Optional(Weight),
    active: Type.Optional(Type.Boolean({ description: 'false stores the key without using it' })),
  },
  { additionalProperties: false },
);

const KeyPatch = Type.Object(
  {
    label: Type.Optional(Type.Union([Label, Type.Null()])),
    weight: Type.Optional(Weight),
    active: Type.Optional(Type.Boolean({ description: 'false stops new requests from using the key' })),
  },
  { additionalProperties: false, minProperties: 1 },
);

const ProviderKeySchema = Type.Object(
  {
    id: Type.String(),
    providerId: Type.String(),
    label: Type.Optional(Type.String()),
    weight: Type.Integer(),
    active: Type.Boolean(),
    source: Type.Enum(['config', 'runtime'] as const, {
      description: '`config`: gateway.yaml (changed there); `runtime`: added through this API',
    }),
    keyEnding: Type.String({ description: "The key's last 4 characters (empty for a key under 12), never more" }),
    breaker: Type.Enum(['closed', 'open', 'half-open'] as const, {
      description: "The worst state of the key's breakers over the provider's rows, in the process that answers",
    }),
    headroom: Type.Object(
      {
        remainingRequests: Type.Optional(Type.Integer()),
        remainingTokens: Type.Optional(Type.Integer()),
        observedAt: Type.Optional(Type.String({ format: 'date-time' })),
        exhaustedUntil: Type.Optional(
          Type.String({ format: 'date-time', description: 'Requests pass the key over until then' }),
        ),
      },
      { description: "What the answering process last read of the key's rate limits from the upstream's headers" },
    ),
  },
  { description: "A provider's upstream key, without the key itself" },
);

const ProviderKeyListSchema = Type.Object({
  providerId: Type.String(),
  keys: Type.Array(ProviderKeySchema),
});

const keyExample: Static<typeof ProviderKeySchema> = {
  id: 'pkey_3f9a1c7e5b2d4a6f8e0c1b3d5f7a9e2c',
  providerId: 'openai',
  label: 'team-b quota',
  weight: 3,
  active: true,
  source: 'runtime',
  keyEnding: 'x9Qa',
  breaker: 'closed',
  headroom: { remainingRequests: 4987, remainingTokens: 1_998_000, observedAt: '2026-11-27T04:10:00.000Z' },
};
const configKeyExample: Static<typeof ProviderKeySchema> = {
  id: 'primary',
  providerId: 'openai',
  weight: 1,
  active: true,
  source: 'config',
  keyEnding: 'k3Lm',
  breaker: 'closed',
  headroom: {},
};
const newKeyExample = { key: 'sk-proj-EXAMPLE-not-a-real-key-x9Qa', label: 'team-b quota', weight: 3 };
const patchExample = { weight: 0 };

/**
 * The providers' upstream keys at runtime (admin API, `Authorization: Bearer <GATEWAY_ADMIN_TOKEN>`): list, add,
 * reweight or switch, remove. Every change reaches every gateway process sharing the database within moments,
 * and is audited; no answer, log line or audit entry carries a key.
 */
export const providerKeyRoutes: FastifyPluginAsyncTypebox<{ services: ProviderKeyServices }> = async (
  app,
  { services },
) => {
  refuseUnknownFields(app);
  app.addHook('onRequest', operatorOnly(services.adminToken));
  const keys = services.providerKeys;

  app.get(
    '/v1/providers/:providerId/keys',
    {
      schema: {
        summary: "A provider's upstream keys",
        description:
          "Every key of the provider, from gateway.yaml and added here: its id, label, weight, whether it is used, where it comes from, its breaker's state and the rate-limit headroom last read from the upstream (both as the answering process sees them). Never the key: at most its last 4 characters. 404 for a provider gateway.yaml does not name.",
        params: ProviderParams,
        response: { 200: ProviderKeyListSchema },
        documentedExample: { answer: { providerId: 'openai', keys: [configKeyExample, keyExample] } },
      },
    },
    async (request) => ({
      providerId: request.params.providerId,
      keys: keys.list(request.params.providerId),
    }),
  );

  app.post(
    '/v1/providers/:providerId/keys',
    {
      config: { audit: { action: 'provider-key.create', subject: { type: 'provider-key', from: 'answer' } } },
      schema: {
        summary: 'Add an upstream key to a provider',
        description:
          "Stores the key sealed with the gateway secret; every gateway process starts choosing it by its weight within a second. The answer shows the key's id and last 4 characters only.",
        params: ProviderParams,
        body: NewKeyBody,
        response: { 201: ProviderKeySchema },
        documentedExample: { request: newKeyExample, answer: { ...keyExample, headroom: {} } },
      },
    },
    async (request, reply) => {
      const created = await keys.create(request.params.providerId, request.body);
      reply.code(201);
      return created;
    },
  );

  app.patch(
    '/v1/providers/:providerId/keys/:keyId',
    {
      config: { audit: { action: 'provider-key.update', subject: { type: 'provider-key', from: 'path' } } },
      schema: {
        summary: "Change a runtime key's weight, label or whether it is used",
        description:
          'Applies to the next requests of every gateway process within a second; requests already sent with the key go on. A key of gateway.yaml answers 409: change it in the file and reload.',
        params: ProviderKeyParams,
        body: KeyPatch,
        response: { 200: ProviderKeySchema },
        documentedExample: { request: patchExample, answer: { ...keyExample, ...patchExample } },
      },
    },
    async (request) => keys.update(request.params.providerId, request.params.keyId, request.body),
  );

  app.delete(
    '/v1/providers/:providerId/keys/:keyId',
    {
      config: { audit: { action: 'provider-key.delete', subject: { type: 'provider-key', from: 'path' } } },
      schema: {
        summary: 'Remove a runtime key',
        description:
          'No request chooses the key any more, in any gateway process, within a second; requests already sent with it finish with it. A key of gateway.yaml answers 409.',
        params: ProviderKeyParams,
        response: { 204: noBody('Removed: no new request uses the key') },
      },
    },
    async (request, reply) => {
      await keys.remove(request.params.providerId, request.params.keyId);
      return reply.code(204).send();
    },
  );
};
