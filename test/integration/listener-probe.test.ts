/**
 * The LISTEN connection's health: a socket that dies silently (no FIN, no RST: a vanished host or NAT entry)
 * used to leave the listener "live" for good, so caches trusted their entries for the full TTL while every
 * other process's revocations were lost. The listener's socket now has TCP keepalive, and a cheap query
 * probes it: one that goes unanswered marks it lost (caches forget, `listening()` is false), and it listens
 * again on a fresh connection.
 */
import { Socket } from 'node:net';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import type { StorageEvent } from '../../src/storage/storage-events.ts';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function until(what: string, done: () => boolean, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!done()) {
    if (Date.now() > deadline) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(20);
  }
}

describe('the LISTEN connection', () => {
  let database: TestDatabase;
  let proxy: TcpProxy;
  let storage: Storage;
  const events: StorageEvent[] = [];
  const errors: Error[] = [];
  const keepAlive = vi.spyOn(Socket.prototype, 'setKeepAlive');

  beforeAll(async () => {
    database = await createTestDatabase();
    proxy = await startTcpProxy(database.url);
    storage = await openStorage({
      kind: 'postgres',
      url: proxy.url,
      poolSize: 2,
      onError: (error) => errors.push(error),
      listenerProbe: { everyMs: 100, timeoutMs: 1_000 },
    });
    storage.subscribe((event) => events.push(event));
  });

  afterAll(async () => {
    keepAlive.mockRestore();
    // Cuts the silenced sockets first, so that closing the storage does not wait on them.
    await proxy?.stop();
    await storage?.close().catch(() => undefined);
    await database?.drop();
  });

  it('has TCP keepalive on its socket (the pool does not need it: its connections send queries)', () => {
    expect(keepAlive.mock.calls).toEqual([[true, 10_000]]);
  });

  it('is marked lost when its socket goes silent, caches are told to forget, and it listens again on a fresh connection', async () => {
    expect(storage.listening()).toBe(true);
    proxy.silenceOpen();
    await until('the silent listener is marked lost', () => !storage.listening(), 3_000);
    expect(events).toContainEqual({ type: 'key-changed', keyId: '*' });
    expect(errors.map((error) => error.message)).toContainEqual(
      expect.stringMatching(/did not answer a probe within 1000 ms/),
    );

    await until('the listener listens again', () => storage.listening(), 5_000);
    // Events reach it again: sent straight to the database (the pool's connections are silenced too).
    const sender = new pg.Client({ connectionString: database.url });
    await sender.connect();
    try {
      // Payloads that are no event of this version (anyone may NOTIFY on the channel) are reported, not handed on.
      for (const payload of [
        'not json',
        JSON.stringify({ type: 'give-back-credit' }),
        JSON.stringify({ type: 'key-changed', keyId: 7 }),
        JSON.stringify({ type: 'account-changed', accountId: 7 }),
        JSON.stringify({ type: 'compact-everything' }),
        // A field a newer version adds does not hide the event from this one.
        JSON.stringify({ type: 'job-finished', jobId: 'job_probe', reason: 'a newer field' }),
      ])
        await sender.query(`SELECT pg_notify('gateway_events', $1)`, [payload]);
    } finally {
      await sender.end();
    }
    await until('the event arrives', () => events.some((event) => event.type === 'job-finished'), 3_000);
    expect(events.filter((event) => event.type !== 'key-changed' || event.keyId !== '*')).toEqual([
      { type: 'job-finished', jobId: 'job_probe', reason: 'a newer field' },
    ]);
    expect(errors.map((error) => error.message).filter((message) => message.includes('storage event'))).toEqual([
      'a storage event that is not JSON was ignored',
      'a storage event of an unknown shape (type "give-back-credit") was ignored',
      'a storage event of an unknown shape (type "key-changed") was ignored',
      'a storage event of an unknown shape (type "account-changed") was ignored',
      'a storage event of an unknown shape (type "compact-everything") was ignored',
    ]);
  });

  it('stays live while its connection answers', async () => {
    const before = events.length;
    await sleep(500);
    expect(storage.listening()).toBe(true);
    expect(events.slice(before).filter((event) => event.type === 'key-changed')).toEqual([]);
  });
});
