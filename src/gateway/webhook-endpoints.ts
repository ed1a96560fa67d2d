import { randomBytes } from 'node:crypto';
import { GatewayError } from '../domain/errors.ts';
import { nanosToUsd, typedUsdToNanos } from '../domain/money.ts';
import {
  isSubscribableEventType,
  type SubscribableEventType,
  webhookRowId,
  type WebhookDeliveryState,
} from '../domain/webhook-events.ts';
import { sealSecret, unsealSecret } from '../identity/credential-codec.ts';
import type { SecretKeys } from '../identity/secret-keys.ts';
import { checkedWebhookUrl } from '../jobs/webhook-sender.ts';
import { RemoteMediaError } from '../media/remote-media.ts';
import type { PageWindow } from '../storage/database.ts';
import type { WebhookEndpointRow, WebhooksRepository } from '../storage/webhooks-repository.ts';

/** An endpoint as the account API shows it: never its secret. */
export interface WebhookEndpointView {
  id: string;
  url: string;
  description: string;
  eventTypes: SubscribableEventType[];
  isActive: boolean;
  createdAt: string;
  updatedAt: string;
}

export interface EndpointInput {
  url: string;
  description?: string;
  eventTypes: string[];
  isActive?: boolean;
}

export interface WebhookAttemptView {
  attempt: number;
  statusCode: number | null;
  latencyMs: number;
  error: string | null;
  responseExcerpt: string | null;
  at: string;
}

export interface WebhookDeliveryView {
  id: string;
  eventType: string;
  state: WebhookDeliveryState;
  attempts: number;
  nextAttemptAt: string | null;
  createdAt: string;
  finishedAt: string | null;
  data: unknown;
  log: WebhookAttemptView[];
}

export interface WebhookServiceOptions {
  repository: WebhooksRepository;
  secretKeys: SecretKeys;
  /** `remoteMedia.allowPrivateAddresses`. */
  allowPrivateAddresses: boolean;
  /** The media URL rules' resolution check (a name resolving to a private address now is refused at once). */
  checkAddress: (url: string) => Promise<void>;
  /** A delivery was queued in this process: the sender looks at once. */
  wake: () => void;
}

/** Endpoints one account may have: each event is sent to every one subscribed to it. */
const maxEndpointsPerAccount = 20;

/** `whsec_` and 32 random bytes in base64, the secret format the standardwebhooks libraries read. */
function newSigningSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

/**
 * An account's webhook endpoints, their secrets (sealed with the gateway secret, shown once at creation and
 * at rotation), their delivery logs, its test event and its low-balance threshold.
 */
export class WebhookService {
  constructor(private readonly options: WebhookServiceOptions) {}

  async list(accountId: string): Promise<WebhookEndpointView[]> {
    return (await this.options.repository.listEndpoints(accountId)).map(endpointView);
  }

  async create(accountId: string, input: EndpointInput): Promise<WebhookEndpointView & { secret: string }> {
    const url = await this.checkedUrl(input.url);
    const secret = newSigningSecret();
    const row = await this.options.repository.createEndpoint(
      {
        id: webhookRowId('ep'),
        accountId,
        url,
        description: input.description ?? '',
        eventTypes: checkedEventTypes(input.eventTypes),
        isActive: input.isActive ?? true,
        sealedSecret: sealSecret(this.options.secretKeys, secret),
      },
      maxEndpointsPerAccount,
    );
    if (!row)
      throw new GatewayError('GW_FORBIDDEN', `an account has at most ${maxEndpointsPerAccount} webhook endpoints`);
    return { ...endpointView(row), secret };
  }

  async update(accountId: string, id: string, changes: Partial<EndpointInput>): Promise<WebhookEndpointView> {
    await this.owned(accountId, id);
    const row = await this.options.repository.updateEndpoint(accountId, id, {
      ...(changes.url !== undefined ? { url: await this.checkedUrl(changes.url) } : {}),
      ...(changes.description !== undefined ? { description: changes.description } : {}),
      ...(changes.eventTypes !== undefined ? { eventTypes: checkedEventTypes(changes.eventTypes) } : {}),
      ...(changes.isActive !== undefined ? { isActive: changes.isActive } : {}),
    });
    if (!row) throw notFound();
    return endpointView(row);
  }

  async remove(accountId: string, id: string): Promise<void> {
    if (!(await this.options.repository.deleteEndpoint(accountId, id))) throw notFound();
  }

  /** A new secret replaces the old at once: deliveries from now on are signed with it. */
  async rotateSecret(accountId: string, id: string): Promise<{ id: string; secret: string }> {
    await this.owned(accountId, id);
    const secret = newSigningSecret();
    const row = await this.options.repository.updateEndpoint(accountId, id, {
      sealedSecret: sealSecret(this.options.secretKeys, secret),
    });
    if (!row) throw notFound();
    return { id, secret };
  }

  /**
   * Queues a `webhook.test` event for the endpoint (whatever it subscribes to); answers the delivery's id. One at
   * a time: while a test is still being delivered (retries included) another answers 409, so test events cannot
   * pile up deliveries and signed requests to a receiver.
   */
  async sendTest(accountId: string, id: string): Promise<{ deliveryId: string }> {
    const endpoint = await this.owned(accountId, id);
    const deliveryId = await this.options.repository.queueTestOnce(endpoint, {
      endpointId: endpoint.id,
      message: 'A test event sent from the gateway',
    });
    if (deliveryId === undefined)
      throw new GatewayError(
        'GW_CONFLICT',
        'a test event of this endpoint is still being delivered; send another once it has ended (see its deliveries)',
      );
    this.options.wake();
    return { deliveryId };
  }

  async deliveries(
    accountId: string,
    id: string,
    page: PageWindow,
  ): Promise<{ results: WebhookDeliveryView[]; total: number; offset: number; limit: number }> {
    await this.owned(accountId, id);
    const { deliveries, attempts, total } = await this.options.repository.deliveriesOf(id, page);
    const results = deliveries.map((delivery) => ({
      id: delivery.id,
      eventType: delivery.eventType,
      state: delivery.state,
      attempts: delivery.attempts,
      nextAttemptAt: delivery.state === 'queued' ? delivery.runAfter.toISOString() : null,
      createdAt: delivery.createdAt.toISOString(),
      finishedAt: delivery.finishedAt?.toISOString() ?? null,
      data: delivery.data,
      log: attempts
        .filter((attempt) => attempt.deliveryId === delivery.id)
        .map((attempt) => ({
          attempt: attempt.attempt,
          statusCode: attempt.statusCode,
          latencyMs: attempt.latencyMs,
          error: attempt.error,
          responseExcerpt: attempt.responseExcerpt,
          at: attempt.createdAt.toISOString(),
        })),
    }));
    return { results, total, ...page };
  }

  async balanceAlert(accountId: string): Promise<{ threshold: number | null }> {
    const threshold = await this.options.repository.balanceAlert(accountId);
    if (threshold === undefined) throw new GatewayError('GW_NOT_FOUND', 'no such account');
    return { threshold: threshold === null ? null : nanosToUsd(threshold) };
  }

  /** `balance.low` is sent when a settlement takes the balance from at or above this to below it. */
  async setBalanceAlert(accountId: string, threshold: number | null): Promise<{ threshold: number | null }> {
    const nanos = threshold === null ? null : typedUsdToNanos(threshold, 'threshold', 'allowed');
    await this.options.repository.setBalanceAlert(accountId, nanos);
    return { threshold: nanos === null ? null : nanosToUsd(nanos) };
  }

  /** The secret an attempt signs with, from its sealed form (the delivery worker's only way to it). */
  secretOf(sealedSecret: string): string {
    return unsealSecret(this.options.secretKeys, sealedSecret);
  }

  private async owned(accountId: string, id: string): Promise<WebhookEndpointRow> {
    const row = await this.options.repository.findEndpoint(accountId, id);
    if (!row) throw notFound();
    return row;
  }

  /** The URL rules of webhooks (https; the media URL address rules, names resolved now and again when sending). */
  private async checkedUrl(text: string): Promise<string> {
    try {
      const url = checkedWebhookUrl(text, this.options);
      await this.options.checkAddress(url.href);
      return url.href;
    } catch (error) {
      if (error instanceof RemoteMediaError) throw new GatewayError('GW_VALIDATION', `url: ${error.message}`);
      throw error;
    }
  }
}

function checkedEventTypes(names: readonly string[]): SubscribableEventType[] {
  const unknown = names.find((name) => !isSubscribableEventType(name));
  if (unknown !== undefined) throw new GatewayError('GW_VALIDATION', `eventTypes: unknown event type "${unknown}"`);
  return [...new Set(names.filter(isSubscribableEventType))];
}

function endpointView(row: WebhookEndpointRow): WebhookEndpointView {
  return {
    id: row.id,
    url: row.url,
    description: row.description,
    eventTypes: row.eventTypes.filter(isSubscribableEventType),
    isActive: row.isActive,
    createdAt: row.createdAt.toISOString(),
    updatedAt: row.updatedAt.toISOString(),
  };
}

function notFound(): GatewayError {
  return new GatewayError('GW_NOT_FOUND', 'no such webhook endpoint');
}
