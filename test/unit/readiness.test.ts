import { describe, expect, it, vi } from 'vitest';
import { DrizzleQueryError } from 'drizzle-orm';
import { Readiness, type ReadinessDependencies } from '../../src/gateway/readiness.ts';

function readinessWith(overrides: Partial<ReadinessDependencies> = {}) {
  const failures: string[] = [];
  const readiness = new Readiness({
    pingDatabase: async () => undefined,
    checkObjectStore: async () => undefined,
    queueDepth: async () => ({ queued: 2, processing: 5 }),
    worker: { isRunning: true, active: 1 },
    concurrency: 16,
    timeoutMs: 50,
    onCheckFailed: (check) => failures.push(check),
    ...overrides,
  });
  return { readiness, failures };
}

describe('readiness', () => {
  it('is starting until the server listens, ready then, and draining for good once told to stop', async () => {
    const { readiness } = readinessWith();
    expect((await readiness.report()).status).toBe('starting');
    readiness.listening();
    const ready = await readiness.report();
    expect(ready).toMatchObject({
      status: 'ready',
      checks: { database: { ok: true }, objectStore: { ok: true } },
      workers: { jobs: { state: 'running', active: 1, concurrency: 16, byState: { queued: 2, processing: 5 } } },
    });
    expect(ready.checks.database.error).toBeUndefined();
    readiness.draining();
    readiness.listening();
    expect((await readiness.report()).status).toBe('draining');
  });

  it('is unavailable while a check fails, naming the error code, and tells of a failing check once per streak', async () => {
    let down = true;
    const { readiness, failures } = readinessWith({
      pingDatabase: async () => {
        if (down) throw Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' });
      },
      queueDepth: async () => {
        if (down) throw new Error('no database');
        return {};
      },
    });
    readiness.listening();
    const report = await readiness.report();
    expect(report.status).toBe('unavailable');
    expect(report.checks.database).toEqual({ ok: false, latencyMs: expect.any(Number), error: 'ECONNREFUSED' });
    expect(report.checks.objectStore.ok).toBe(true);
    expect(report.workers.jobs.byState).toBeUndefined();
    await readiness.report();
    expect(failures).toEqual(['database']);
    down = false;
    expect((await readiness.report()).status).toBe('ready');
    down = true;
    await readiness.report();
    expect(failures).toEqual(['database', 'database']);
  });

  it("reads the code or class of the error a query builder's wraps, never the wrapper's message", async () => {
    const databaseErrors = [
      // Drizzle wraps the driver's error; its message quotes the query and its parameters.
      new DrizzleQueryError(
        'SELECT id FROM accounts WHERE email = $1',
        ['someone@example.com'],
        Object.assign(new Error('connect ECONNREFUSED 10.0.0.7:5432'), { code: 'ECONNREFUSED' }),
      ),
      new DrizzleQueryError('SELECT 1', [], Object.assign(new Error('terminating connection'), { code: '57P01' })),
      new DrizzleQueryError('SELECT $1', ['secret value'], new Error('Connection terminated unexpectedly')),
    ];
    const reasons: Array<string | undefined> = [];
    for (const failure of databaseErrors) {
      const { readiness } = readinessWith({
        pingDatabase: async () => {
          throw failure;
        },
      });
      readiness.listening();
      reasons.push((await readiness.report()).checks.database.error);
    }
    expect(reasons).toEqual(['ECONNREFUSED', '57P01', 'Connection terminated unexpectedly']);
  });

  it('gives up on a check that hangs after its timeout, and shares it with later probes instead of starting another', async () => {
    const ping = vi.fn(() => new Promise<void>(() => undefined));
    const { readiness } = readinessWith({ checkObjectStore: ping });
    readiness.listening();
    const started = performance.now();
    const [first, second] = await Promise.all([readiness.report(), readiness.report()]);
    expect(performance.now() - started).toBeLessThan(1_000);
    expect(first.checks.objectStore).toMatchObject({ ok: false, error: 'no answer within 50 ms' });
    expect(second.status).toBe('unavailable');
    await readiness.report();
    expect(ping).toHaveBeenCalledTimes(1);
  });

  it('starts the check again once one has hung for twenty timeouts, so readiness comes back with the database', async () => {
    let now = 0;
    let calls = 0;
    const ping = vi.fn(() => (++calls === 1 ? new Promise<void>(() => undefined) : Promise.resolve()));
    const { readiness } = readinessWith({ pingDatabase: ping, clock: () => now });
    readiness.listening();
    expect((await readiness.report()).status).toBe('unavailable');
    now = 50 * 19;
    expect((await readiness.report()).status).toBe('unavailable');
    expect(ping).toHaveBeenCalledTimes(1);
    now = 50 * 21;
    expect((await readiness.report()).status).toBe('ready');
    expect(ping).toHaveBeenCalledTimes(2);
  });

  it('reports a stopped worker without failing readiness', async () => {
    const { readiness } = readinessWith({ worker: { isRunning: false, active: 0 }, concurrency: 0 });
    readiness.listening();
    expect(await readiness.report()).toMatchObject({
      status: 'ready',
      workers: { jobs: { state: 'stopped', active: 0, concurrency: 0 } },
    });
  });
});
