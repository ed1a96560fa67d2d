import { randomUUID } from 'node:crypto';

/**
 * The events an account's webhook endpoints may subscribe to, and the states of a delivery. The storage
 * triggers of migration 0015 queue every one but `webhook.test`, which the account sends itself.
 */
export const webhookEventTypes = [
  'media_job.completed',
  'media_job.failed',
  'balance.low',
  'api_key.cap_reached',
  'api_key.disabled',
  'webhook.test',
] as const;
export type WebhookEventType = (typeof webhookEventTypes)[number];

/** What an endpoint may subscribe to: every event but the test, which is sent whatever it subscribes to. */
export const subscribableEventTypes = webhookEventTypes.filter(
  (type): type is Exclude<WebhookEventType, 'webhook.test'> => type !== 'webhook.test',
);
export type SubscribableEventType = (typeof subscribableEventTypes)[number];

const eventTypeNames: ReadonlySet<string> = new Set(subscribableEventTypes);
export function isSubscribableEventType(name: string): name is SubscribableEventType {
  return eventTypeNames.has(name);
}

export const webhookDeliveryStates = ['queued', 'delivering', 'succeeded', 'failed'] as const;
export type WebhookDeliveryState = (typeof webhookDeliveryStates)[number];

/** The body every endpoint receives, in the Standard Webhooks shape: the same bytes on every attempt. */
export function webhookBody(event: { type: string; createdAt: Date; data: unknown }): string {
  return JSON.stringify({ type: event.type, timestamp: event.createdAt.toISOString(), data: event.data });
}

/** Prefixed random ids of webhook rows: `ep` an endpoint, `msg` a delivery (its `webhook-id`), `att` an attempt. */
export function webhookRowId(kind: 'ep' | 'msg' | 'att'): string {
  return `${kind}_${randomUUID().replaceAll('-', '')}`;
}
