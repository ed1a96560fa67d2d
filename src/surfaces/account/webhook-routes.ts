import { Type, type FastifyPluginAsyncTypebox } from '@fastify/type-provider-typebox';
import type { FastifyRequest } from 'fastify';
import type { GatewayServices } from '../../gateway/services.ts';
import type { AuditedRoute } from '../../http/audit-hook.ts';
import { principalOf } from '../../http/authentication.ts';
import { noBody } from '../../http/openapi/route-documentation.ts';
import {
  BalanceAlertSchema,
  CreatedEndpointSchema,
  DeliveriesQuery,
  DeliveryPageSchema,
  EndpointIdParams,
  EndpointPatchBody,
  EndpointSchema,
  NewEndpointBody,
  RotatedSecretSchema,
  TestEventSchema,
  webhookExamples as examples,
} from './webhook-schemas.ts';

/** The services this surface uses, and only those. */
export type WebhookServices = Pick<GatewayServices, 'config' | 'webhooks'>;

/** Webhook changes are the account's own: the log names the account, and keeps the request without secrets. */
const audited = (action: AuditedRoute['action']): { audit: AuditedRoute } => ({
  audit: { action, subject: { type: 'account', from: 'caller' } },
});

/**
 * The account's webhook endpoints, their delivery logs, the test event and the low-balance threshold.
 * Registered behind the account API's authentication (a session, with its CSRF rule, or a key of the account).
 * A signing secret is in an answer only when it is made: at creation and at rotation.
 */
export const webhookRoutes: FastifyPluginAsyncTypebox<{ services: WebhookServices }> = async (app, { services }) => {
  const accountOf = (request: FastifyRequest) => principalOf(request).accountId;
  const { webhooks } = services;

  app.get(
    '/webhooks/endpoints',
    {
      schema: {
        summary: "The account's webhook endpoints",
        description: 'Every endpoint of the account with the events it takes, without its signing secret.',
        response: { 200: Type.Array(EndpointSchema) },
        documentedExample: { answer: examples.endpoints },
      },
    },
    async (request) => webhooks.list(accountOf(request)),
  );

  app.post(
    '/webhooks/endpoints',
    {
      config: audited('webhook.create'),
      schema: {
        summary: 'Add a webhook endpoint',
        description:
          'An https URL (never a private, loopback or link-local address, checked again at each delivery) and the events it takes. The answer carries the signing secret, shown only now: events are signed with it in the Standard Webhooks format.',
        body: NewEndpointBody,
        response: { 201: CreatedEndpointSchema },
        documentedExample: { request: examples.newEndpoint, answer: examples.created },
      },
    },
    async (request, reply) => {
      const created = await webhooks.create(accountOf(request), request.body);
      reply.code(201);
      return created;
    },
  );

  app.patch(
    '/webhooks/endpoints/:endpointId',
    {
      config: audited('webhook.update'),
      schema: {
        summary: 'Change a webhook endpoint',
        description:
          'Its URL, description, events or whether it is active; the fields left out keep theirs. An inactive endpoint is sent nothing (its queued deliveries fail).',
        params: EndpointIdParams,
        body: EndpointPatchBody,
        response: { 200: EndpointSchema },
        documentedExample: { request: examples.patch, answer: { ...examples.endpoint, ...examples.patch } },
      },
    },
    async (request) => webhooks.update(accountOf(request), request.params.endpointId, request.body),
  );

  app.delete(
    '/webhooks/endpoints/:endpointId',
    {
      config: audited('webhook.delete'),
      schema: {
        summary: 'Remove a webhook endpoint',
        description: 'The endpoint, its pending deliveries and its delivery log are removed.',
        params: EndpointIdParams,
        response: { 204: noBody('Removed') },
      },
    },
    async (request, reply) => {
      await webhooks.remove(accountOf(request), request.params.endpointId);
      return reply.code(204).send();
    },
  );

  app.post(
    '/webhooks/endpoints/:endpointId/rotate-secret',
    {
      config: audited('webhook.rotate-secret'),
      schema: {
        summary: "Rotate an endpoint's signing secret",
        description:
          'A new secret replaces the old at once (attempts from now on, retries included, are signed with it); it is shown only in this answer.',
        params: EndpointIdParams,
        response: { 200: RotatedSecretSchema },
        documentedExample: { answer: examples.rotated },
      },
    },
    async (request) => webhooks.rotateSecret(accountOf(request), request.params.endpointId),
  );

  app.post(
    '/webhooks/endpoints/:endpointId/test',
    {
      config: audited('webhook.test'),
      schema: {
        summary: 'Send a test event',
        description:
          'Queues a `webhook.test` event for the endpoint, whatever events it takes; it is delivered, retried and logged as any other. One at a time: while an earlier test event of the endpoint is still being delivered (its retries included), the answer is 409.',
        params: EndpointIdParams,
        response: { 202: TestEventSchema },
        documentedExample: { answer: examples.test },
      },
    },
    async (request, reply) => {
      const queued = await webhooks.sendTest(accountOf(request), request.params.endpointId);
      reply.code(202);
      return queued;
    },
  );

  app.get(
    '/webhooks/endpoints/:endpointId/deliveries',
    {
      schema: {
        summary: "An endpoint's delivery log, newest first",
        description:
          'One page of the events sent (or to be sent) to the endpoint: their state and each attempt with its status code, latency, error and the start of the answer.',
        params: EndpointIdParams,
        querystring: DeliveriesQuery(services.config.usage.maxPageSize),
        response: { 200: DeliveryPageSchema },
        documentedExample: { answer: examples.deliveries },
      },
    },
    async (request) => {
      const { offset, limit } = request.query;
      return webhooks.deliveries(accountOf(request), request.params.endpointId, { offset, limit });
    },
  );

  app.get(
    '/webhooks/balance-alert',
    {
      schema: {
        summary: 'The low-balance threshold',
        description: 'The balance in USD below which a `balance.low` event is sent; null when none is set.',
        response: { 200: BalanceAlertSchema },
        documentedExample: { answer: examples.balanceAlert },
      },
    },
    async (request) => webhooks.balanceAlert(accountOf(request)),
  );

  app.put(
    '/webhooks/balance-alert',
    {
      config: audited('account.balance-alert'),
      schema: {
        summary: 'Set or remove the low-balance threshold',
        description:
          'A `balance.low` event is sent once when a settlement takes the balance from at or above the threshold to below it, and again only after the balance has risen to it and falls below once more. `null` removes the alert.',
        body: BalanceAlertSchema,
        response: { 200: BalanceAlertSchema },
        documentedExample: { request: examples.balanceAlert, answer: examples.balanceAlert },
      },
    },
    async (request) => webhooks.setBalanceAlert(accountOf(request), request.body.threshold),
  );
};
