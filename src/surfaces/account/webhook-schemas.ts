import { Type, type Static } from '@fastify/type-provider-typebox';
import { pageFields } from '../../http/answer-schemas.ts';
import { Identifier, PageQueryFields, StoredText } from '../../http/schemas.ts';
import { subscribableEventTypes, webhookDeliveryStates } from '../../domain/webhook-events.ts';

/** The account API's webhook shapes (webhook-routes.ts), with the examples the OpenAPI document shows. */

const EventType = Type.Enum(subscribableEventTypes, { description: 'An event an endpoint may subscribe to' });
const WebhookUrl = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'https URL the events are POSTed to (never a private, loopback or link-local address)',
});
const Description = StoredText({ maxLength: 500 });
const EventTypes = Type.Array(EventType, { minItems: 1, maxItems: subscribableEventTypes.length, uniqueItems: true });

export const EndpointIdParams = Type.Object({ endpointId: Identifier });

export const NewEndpointBody = Type.Object(
  {
    url: WebhookUrl,
    description: Type.Optional(Description),
    eventTypes: EventTypes,
    isActive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false },
);

export const EndpointPatchBody = Type.Object(
  {
    url: Type.Optional(WebhookUrl),
    description: Type.Optional(Description),
    eventTypes: Type.Optional(EventTypes),
    isActive: Type.Optional(Type.Boolean()),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const EndpointSchema = Type.Object(
  {
    id: Type.String(),
    url: Type.String(),
    description: Type.String(),
    eventTypes: Type.Array(EventType),
    isActive: Type.Boolean(),
    createdAt: Type.String({ format: 'date-time' }),
    updatedAt: Type.String({ format: 'date-time' }),
  },
  { description: 'A webhook endpoint, without its secret' },
);

export const CreatedEndpointSchema = Type.Intersect(
  [EndpointSchema, Type.Object({ secret: Type.String({ description: 'The signing secret, shown only now' }) })],
  { description: 'The new endpoint and its signing secret (`whsec_...`), shown once' },
);

export const RotatedSecretSchema = Type.Object(
  { id: Type.String(), secret: Type.String({ description: 'The new signing secret, shown only now' }) },
  { description: 'The endpoint signs with this secret from now on' },
);

export const TestEventSchema = Type.Object(
  { deliveryId: Type.String({ description: 'The `webhook-id` the test event is sent under' }) },
  { description: 'The test event is queued' },
);

const AttemptSchema = Type.Object({
  attempt: Type.Integer({ minimum: 1 }),
  statusCode: Type.Union([Type.Integer(), Type.Null()]),
  latencyMs: Type.Integer({ minimum: 0 }),
  error: Type.Union([Type.String(), Type.Null()]),
  responseExcerpt: Type.Union([Type.String(), Type.Null()], { description: 'The first 512 bytes of the answer' }),
  at: Type.String({ format: 'date-time' }),
});

const DeliverySchema = Type.Object({
  id: Type.String({ description: 'The `webhook-id` of every attempt' }),
  eventType: Type.String(),
  state: Type.Enum(webhookDeliveryStates),
  attempts: Type.Integer({ minimum: 0 }),
  nextAttemptAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  createdAt: Type.String({ format: 'date-time' }),
  finishedAt: Type.Union([Type.String({ format: 'date-time' }), Type.Null()]),
  data: Type.Unknown({ description: "The event's `data`" }),
  log: Type.Array(AttemptSchema),
});

export const DeliveryPageSchema = Type.Object(
  { results: Type.Array(DeliverySchema), ...pageFields },
  { description: "One page of the endpoint's deliveries, newest first, each with its attempts" },
);

export const DeliveriesQuery = (maxPageSize: number) =>
  Type.Object(PageQueryFields(maxPageSize), { additionalProperties: false });

export const BalanceAlertSchema = Type.Object(
  {
    threshold: Type.Union([Type.Number({ minimum: 0, maximum: 1_000_000_000 }), Type.Null()], {
      description: 'USD; `balance.low` is sent when the balance falls below it (null: no alert)',
    }),
  },
  { additionalProperties: false },
);

const endpointExample: Static<typeof EndpointSchema> = {
  id: 'ep_5c1e7a9b3d2f4e6a8c0b1d3f5a7c9e2b',
  url: 'https://hooks.example.com/gateway',
  description: 'Billing alerts',
  eventTypes: ['balance.low', 'api_key.cap_reached'],
  isActive: true,
  createdAt: '2026-03-02T11:20:05.000Z',
  updatedAt: '2026-03-02T11:20:05.000Z',
};

export const webhookExamples = {
  endpoint: endpointExample,
  endpoints: [endpointExample],
  newEndpoint: {
    url: 'https://hooks.example.com/gateway',
    description: 'Billing alerts',
    eventTypes: ['balance.low', 'api_key.cap_reached'],
  } satisfies Static<typeof NewEndpointBody>,
  created: {
    ...endpointExample,
    secret: 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw',
  } satisfies Static<typeof CreatedEndpointSchema>,
  patch: { eventTypes: ['media_job.completed', 'media_job.failed'], isActive: true } satisfies Static<
    typeof EndpointPatchBody
  >,
  rotated: {
    id: endpointExample.id,
    secret: 'whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD',
  } satisfies Static<typeof RotatedSecretSchema>,
  test: { deliveryId: 'msg_2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a' } satisfies Static<typeof TestEventSchema>,
  deliveries: {
    results: [
      {
        id: 'msg_2b4d6f8a0c2e4b6d8f0a2c4e6b8d0f2a',
        eventType: 'balance.low',
        state: 'succeeded',
        attempts: 2,
        nextAttemptAt: null,
        createdAt: '2026-03-02T11:20:05.000Z',
        finishedAt: '2026-03-02T11:20:10.412Z',
        data: { accountId: 'acct_7e9a1c3e5b7d2f4a6c8e0b1d3f5a7c9e', balance: 4.95, threshold: 5 },
        log: [
          {
            attempt: 1,
            statusCode: 503,
            latencyMs: 41,
            error: 'the endpoint answered HTTP 503',
            responseExcerpt: 'upstream unavailable',
            at: '2026-03-02T11:20:05.101Z',
          },
          {
            attempt: 2,
            statusCode: 200,
            latencyMs: 38,
            error: null,
            responseExcerpt: 'ok',
            at: '2026-03-02T11:20:10.412Z',
          },
        ],
      },
    ],
    total: 1,
    offset: 0,
    limit: 20,
  } satisfies Static<typeof DeliveryPageSchema>,
  balanceAlert: { threshold: 5 } satisfies Static<typeof BalanceAlertSchema>,
};
