import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import { WebhookService } from '../../src/gateway/webhook-endpoints.ts';
import { deriveSecretKeys } from '../../src/identity/secret-keys.ts';
import { checkedWebhookUrl, WebhookSender } from '../../src/jobs/webhook-sender.ts';
import { RemoteMediaFetcher } from '../../src/media/remote-media.ts';
import type { WebhooksRepository } from '../../src/storage/webhooks-repository.ts';
import { WebhookReceiver } from '../support/webhook-receiver.ts';

const secret = 'whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw';

describe('webhook sender address rules', () => {
  let receiver: WebhookReceiver;
  let sender: WebhookSender;

  beforeAll(async () => {
    receiver = await WebhookReceiver.start();
    sender = new WebhookSender({ timeoutMs: 2_000, allowPrivateAddresses: false });
  });
  afterAll(async () => {
    await sender?.close();
    await receiver?.close();
  });

  const send = (url: string) => sender.send({ url, secret, id: 'msg_1', body: '{}', now: new Date() });

  it('never sends to a private address: by literal, by a name that resolves there at connect time, or over http', async () => {
    const port = receiver.port;
    const refusals = await Promise.all(
      [
        `https://127.0.0.1:${port}/hook`,
        `https://[::1]:${port}/hook`,
        `https://[::ffff:127.0.0.1]:${port}/hook`,
        `https://169.254.169.254/latest/meta-data`,
        `https://10.1.2.3/hook`,
        // A name: checked on the addresses it resolves to when connecting (DNS rebinding included).
        `https://localhost:${port}/hook`,
        `http://127.0.0.1:${port}/hook`,
        `http://localhost:${port}/hook`,
      ].map(send),
    );
    for (const result of refusals) {
      expect(result).toMatchObject({ delivered: false, retryable: false, statusCode: null });
      expect(result.error).toMatch(/^refused: /);
    }
    expect(refusals[5]!.error).toBe('refused: localhost resolves to a non-public address');
    expect(refusals[6]!.error).toBe('refused: webhook URLs must be https');
    expect(receiver.received).toHaveLength(0);
  });

  it('lets plain http reach loopback only when private addresses are allowed', () => {
    expect(checkedWebhookUrl('http://127.0.0.1:9/x', { allowPrivateAddresses: true }).host).toBe('127.0.0.1:9');
    expect(checkedWebhookUrl('http://localhost:9/x', { allowPrivateAddresses: true }).host).toBe('localhost:9');
    expect(() => checkedWebhookUrl('http://10.0.0.1/x', { allowPrivateAddresses: true })).toThrow(
      'webhook URLs must be https',
    );
    expect(() => checkedWebhookUrl('http://127.0.0.1/x', { allowPrivateAddresses: false })).toThrow(
      'webhook URLs must be https',
    );
    expect(() => checkedWebhookUrl('https://u:p@example.com/x', { allowPrivateAddresses: false })).toThrow(
      'credentials',
    );
    expect(() => checkedWebhookUrl('not a url', { allowPrivateAddresses: false })).toThrow('not a valid URL');
  });

  it('sends with a connection error as worth retrying, without the secret in what it reports', async () => {
    const loopback = new WebhookSender({ timeoutMs: 2_000, allowPrivateAddresses: true });
    // A port nothing listens on.
    const closed = await WebhookReceiver.start();
    const port = closed.port;
    await closed.close();
    const result = await loopback.send({
      url: `http://127.0.0.1:${port}/x`,
      secret,
      id: 'msg_2',
      body: '{}',
      now: new Date(),
    });
    await loopback.close();
    expect(result).toMatchObject({ delivered: false, retryable: true, statusCode: null });
    expect(JSON.stringify(result)).not.toContain(secret.slice(6));
  });
});

describe('webhook endpoint creation', () => {
  it('refuses a URL naming or resolving to a private address before anything is stored', async () => {
    const fetcher = new RemoteMediaFetcher({ timeoutMs: 2_000, maxBytes: 1024, allowPrivateAddresses: false });
    const stored: unknown[] = [];
    const service = new WebhookService({
      repository: {
        createEndpoint: async (row: unknown) => {
          stored.push(row);
          throw new Error('not stored in this test');
        },
      } as unknown as WebhooksRepository,
      secretKeys: deriveSecretKeys('test-secret-0123456789abcdef0123456789abcdef'),
      allowPrivateAddresses: false,
      checkAddress: (url) => fetcher.check(url),
      wake: () => undefined,
    });
    for (const [url, reason] of [
      ['https://localhost/hook', 'url: localhost resolves to a non-public address'],
      ['https://127.0.0.1/hook', 'url: 127.0.0.1 is not a public address'],
      ['https://[fe80::1]/hook', 'url: [fe80::1] is not a public address'],
      ['http://hooks.example.com/hook', 'url: webhook URLs must be https'],
    ] as const) {
      const refusal = await service
        .create('acct_1', { url, eventTypes: ['balance.low'] })
        .catch((error: unknown) => error);
      expect(refusal, url).toBeInstanceOf(GatewayError);
      expect((refusal as GatewayError).code).toBe('GW_VALIDATION');
      expect((refusal as GatewayError).message).toBe(reason);
    }
    expect(stored).toEqual([]);
    await fetcher.close();
  });
});
