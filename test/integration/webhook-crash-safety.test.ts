/**
 * Webhook deliveries survive their gateway process (needs a build: npm run build): a process SIGKILLed while
 * its attempts wait for the receiver's answer leaves them claimed; once the claims run out, another process
 * sends each again under the same `webhook-id`, signed as the standardwebhooks library verifies. None is lost.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { postJson, startGatewayChild, type GatewayChild } from '../support/gateway-child.ts';
import { adminHeaders } from '../support/http-helpers.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';
import { type ReceivedWebhook, WebhookReceiver } from '../support/webhook-receiver.ts';

async function until(what: string, done: () => boolean, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

describe('webhook deliveries across a SIGKILL', () => {
  let directory: string;
  let database: TestDatabase;
  let storage: Storage;
  let receiver: WebhookReceiver;
  const children: GatewayChild[] = [];

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'gw-webhook-crash-'));
    database = await createTestDatabase();
    receiver = await WebhookReceiver.start();
    writeFileSync(
      path.join(directory, 'gateway.yaml'),
      [
        'providers:',
        '  sandbox: { protocol: sandbox }',
        'models:',
        '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
        'remoteMedia: { allowPrivateAddresses: true }',
        'jobs: { idlePollMs: 50 }',
        'webhooks: { claimSeconds: 3, timeoutMs: 2000, retryBaseMs: 50, idlePollMs: 100, maxAttempts: 3 }',
      ].join('\n'),
    );
  });
  afterAll(async () => {
    for (const child of children) await child.kill('SIGKILL');
    await receiver?.close();
    await storage?.close();
    await database?.drop();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  const start = async () => {
    const child = await startGatewayChild({
      configPath: path.join(directory, 'gateway.yaml'),
      dataDir: directory,
      databaseUrl: database.url,
    });
    children.push(child);
    return child;
  };

  it('sends every event claimed by a killed process again, under the same webhook-id', async () => {
    const first = await start();
    const account = await postJson<{ id: string }>(`${first.url}/api/admin/v1/accounts`, adminHeaders, {
      email: `webhook-crash-${Date.now()}@example.com`,
      credits: 1,
    });
    const { key } = await postJson<{ key: string }>(
      `${first.url}/api/admin/v1/accounts/${account.id}/api-keys`,
      adminHeaders,
      { name: 'hooks' },
    );
    const headers = { 'x-api-key': key };
    // Three endpoints, one test event each (an endpoint has one test event under way at a time); the first
    // also takes the media job's event.
    const tests = 3;
    const endpoints: Array<{ id: string; secret: string }> = [];
    for (let n = 0; n < tests; n++)
      endpoints.push(
        await postJson<{ id: string; secret: string }>(`${first.url}/api/v1/webhooks/endpoints`, headers, {
          url: receiver.url,
          eventTypes: [n === 0 ? 'media_job.completed' : 'balance.low'],
        }),
      );
    // The first process never hears back: each attempt is under way when it dies.
    receiver.next = () => 'stall';
    for (const endpoint of endpoints)
      await postJson(`${first.url}/api/v1/webhooks/endpoints/${endpoint.id}/test`, headers);
    await postJson(`${first.url}/api/v1/image/generations`, headers, {
      model: 'sandbox-image',
      content: [{ type: 'text', text: 'a heron' }],
    });
    // Every event reached the receiver (a slow machine may have sent one twice already, after a time-out).
    const idsOf = (requests: readonly ReceivedWebhook[]) =>
      new Set(requests.map((request) => String(request.headers['webhook-id'])));
    await until('every event to arrive once', () => idsOf(receiver.received).size === tests + 1);
    await first.kill('SIGKILL');
    const idsBefore = idsOf(receiver.received);
    const before = receiver.received.length;

    receiver.next = () => ({ status: 200, body: 'ok' });
    await start();
    await until('every event to be sent again', () =>
      [...idsBefore].every((id) => idsOf(receiver.received.slice(before)).has(id)),
    );
    const again = receiver.received.slice(before);
    expect(idsOf(again)).toEqual(idsBefore);
    // Each event is signed with its endpoint's secret: the one that verifies it says which it is.
    const verifiers = endpoints.map((endpoint) => new Webhook(endpoint.secret));
    const typeOf = (request: ReceivedWebhook): string => {
      const headers = {
        'webhook-id': String(request.headers['webhook-id']),
        'webhook-timestamp': String(request.headers['webhook-timestamp']),
        'webhook-signature': String(request.headers['webhook-signature']),
      };
      for (const verifier of verifiers) {
        try {
          return (verifier.verify(request.body, headers) as { type: string }).type;
        } catch {
          // signed by another endpoint's secret
        }
      }
      throw new Error(`no endpoint's secret verifies ${headers['webhook-id']}`);
    };
    const types = new Map(again.map((request) => [String(request.headers['webhook-id']), typeOf(request)]));
    expect([...types.values()].sort()).toEqual(['media_job.completed', 'webhook.test', 'webhook.test', 'webhook.test']);

    storage = await openStorage(database.options);
    const deadline = Date.now() + 10_000;
    let rows: Array<{ state: string; attempts: number }> = [];
    while (Date.now() < deadline) {
      rows = await uncheckedRows<{ state: string; attempts: number }>(
        storage.db,
        sql`SELECT state, attempts FROM webhook_deliveries ORDER BY id`,
      );
      if (rows.every((row) => row.state === 'succeeded')) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(rows).toHaveLength(tests + 1);
    for (const row of rows) {
      expect(row.state).toBe('succeeded');
      // The attempt the killed process left under way counts: each was sent at least twice.
      expect(row.attempts).toBeGreaterThanOrEqual(2);
    }
  });
});
