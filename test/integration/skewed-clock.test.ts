/**
 * Processes sharing PostgreSQL date what they charge by the database server's clock, not their own (needs a
 * build: npm run build). A gateway whose machine clock runs a day and a half ahead dates a request's record,
 * a media job, the job's deadline and its record by the server's time: otherwise its charges would count in a
 * spend window (a UTC day) the other processes have not reached, and its jobs' deadlines would be off by the skew.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { sql } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { fundedKeyOf, postJson, startGatewayChild, type GatewayChild } from '../support/gateway-child.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const skewMs = 36 * 3_600_000;
const skewedClock = path.resolve(import.meta.dirname, '../support/skewed-clock.mjs');

describe('a gateway whose clock runs ahead of the database server', () => {
  let directory: string;
  let database: TestDatabase;
  let storage: Storage;
  let gateway: GatewayChild;

  beforeAll(async () => {
    directory = mkdtempSync(path.join(tmpdir(), 'gw-skewed-clock-'));
    database = await createTestDatabase();
    writeFileSync(
      path.join(directory, 'gateway.yaml'),
      [
        'providers:',
        '  sandbox: { protocol: sandbox }',
        'models:',
        '  - { id: sandbox-echo, pricing: { inputPerMTok: 1, outputPerMTok: 1 }, providers: [{ provider: sandbox, model: echo }] }',
        '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
        'jobs: { idlePollMs: 50, maxJobSeconds: 600 }',
      ].join('\n'),
    );
    gateway = await startGatewayChild({
      configPath: path.join(directory, 'gateway.yaml'),
      dataDir: directory,
      databaseUrl: database.url,
      env: { NODE_OPTIONS: `--import ${skewedClock}`, CLOCK_SKEW_MS: String(skewMs) },
    });
    storage = await openStorage(database.options);
  });
  afterAll(async () => {
    await gateway?.kill('SIGKILL');
    await storage?.close();
    await database?.drop();
    if (directory) rmSync(directory, { recursive: true, force: true });
  });

  it("dates records, jobs and deadlines by the server's clock", async () => {
    const { accountId, key } = await fundedKeyOf(gateway, { credits: 1 });
    const text = await fetch(`${gateway.url}/api/alpha/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...keyHeaders(key) },
      body: JSON.stringify({ model: 'sandbox-echo', messages: [{ role: 'user', content: 'what time is it?' }] }),
    });
    expect(text.status).toBe(200);
    const image = await postJson<{ generationId: string; images: unknown[] }>(
      `${gateway.url}/api/v1/image/generations`,
      keyHeaders(key),
      { model: 'sandbox-image', content: [{ type: 'text', text: 'a sundial' }] },
    );
    expect(image.images).toHaveLength(1);

    const [server] = await uncheckedRows<{ now: Date | string }>(storage.db, sql`SELECT now() AS now`);
    const records = await uncheckedRows<{ modality: string; created_at: Date | string }>(
      storage.db,
      sql`SELECT modality, created_at FROM generations WHERE account_id = ${accountId} ORDER BY modality`,
    );
    expect(records.map(({ modality }) => modality)).toEqual(['image', 'text']);
    const [job] = await uncheckedRows<{ created_at: Date | string; deadline_at: Date | string }>(
      storage.db,
      sql`SELECT created_at, deadline_at FROM media_jobs WHERE id = ${image.generationId}`,
    );
    // Raw rows carry moments as the driver reads them (a Date, or text on the embedded server's wire).
    const skewOf = (moment: Date | string) => new Date(moment).getTime() - new Date(server!.now).getTime();
    // Seconds apart at most (the requests ran just now), never the skew's day and a half.
    for (const { created_at } of records) expect(Math.abs(skewOf(created_at))).toBeLessThan(60_000);
    expect(Math.abs(skewOf(job!.created_at))).toBeLessThan(60_000);
    expect(Math.abs(skewOf(job!.deadline_at) - 600_000)).toBeLessThan(60_000);
  }, 90_000);
});
