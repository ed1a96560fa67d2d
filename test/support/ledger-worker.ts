/**
 * A gateway process for the multi-process ledger tests, and the parent-side handle that drives it.
 *
 * Child side (runs when LEDGER_WORKER_OPTIONS is set, i.e. when started by `startLedgerWorker`): opens the
 * real gateway (`createGateway` from src/main.ts) on the storage it is told, answers `ready`, then carries
 * out commands sent over the IPC channel (advanced serialisation, so bigints travel as bigints). It exits
 * by itself when told to close, when the parent goes away (IPC disconnect) and in any case after
 * `lifetimeMs`, so a failed test never leaves it running.
 *
 * Parent side: `startLedgerWorker` forks `node --import tsx test/support/ledger-worker.ts` and returns a
 * handle with typed `call`s, `kill` and `stop`; `stopAllLedgerWorkers` ends every child still alive.
 */
import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { eq, sql } from 'drizzle-orm';
import pino from 'pino';
import type { Reservation } from '../../src/billing/credit-ledger.ts';
import { readEnvironment } from '../../src/config/environment.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { isGatewayError } from '../../src/domain/errors.ts';
import { createGateway, type RunningGateway } from '../../src/main.ts';
import { accounts, apiKeys, holds as holdsTable } from '../../src/storage/schema.ts';

export interface LedgerWorkerOptions {
  /** `postgres` with the URL of the (test) database, or the embedded default on a DATA_DIR of its own. */
  storage: { kind: 'postgres'; url: string } | { kind: 'embedded'; dataDir: string };
  /** gateway.yaml text. */
  configText: string;
  /** DATA_DIR of the process (an existing directory the parent cleans up). */
  dataDir: string;
  /** The process exits by itself after this long, whatever happens. */
  lifetimeMs: number;
}

export interface SettleResult {
  settledCostNanos: bigint;
  settledCount: number;
  /** Settlements whose hold had already been reconciled away (must be none). */
  settledWithoutHold: number;
}

export interface StormResult extends SettleResult {
  admitted: number;
  /** Refusals by `code/status`. */
  refusals: Record<string, number>;
  /** Refusal messages, deduplicated. */
  refusalMessages: string[];
  /** Anything thrown that is not a GatewayError. */
  unexpected: string[];
}

export interface LedgerState {
  balanceNanos: bigint;
  heldNanos: bigint;
  keyHeldNanos: bigint;
  keySpentNanos: bigint;
  holds: Array<{ id: string; amountNanos: bigint; instanceId: string }>;
}

/** Commands the worker understands: what is sent and what comes back. */
export interface WorkerCommands {
  createFundedKey: {
    args: { credits: number; limits?: Record<string, number> };
    result: { accountId: string; keyId: string; key: string };
  };
  /**
   * At `startAt` (epoch ms; lets two processes start together) takes `count` concurrent holds. With
   * `settleSeed`, then settles every admitted one concurrently at a pseudo-random cost between 0 and the
   * hold; without, keeps them for `settleAll`.
   */
  holdStorm: {
    args: {
      accountId: string;
      apiKeyId: string | null;
      count: number;
      amountNanos: bigint;
      startAt: number;
      settleSeed?: number;
    };
    result: StormResult;
  };
  /** Settles every hold this process still has, concurrently, at seeded random costs <= each hold. */
  settleAll: { args: { seed: number; startAt: number }; result: SettleResult };
  hold: { args: { accountId: string; apiKeyId: string | null; amountNanos: bigint }; result: { holdId: string } };
  settle: { args: { holdId: string; costNanos: bigint }; result: { holdWasOutstanding: boolean } };
  release: { args: { holdId: string }; result: { released: true } };
  /** Gives back the credit this process leased and no hold uses. */
  giveBackUnused: { args: Record<string, never>; result: { done: true } };
  /** The account and key rows as this process reads them, and the account's outstanding holds. */
  state: { args: { accountId: string; keyId: string }; result: LedgerState };
  authenticate: { args: { key: string }; result: { ok: boolean; code?: string } };
  /**
   * Authenticates `key` every `intervalMs` until it is refused (then sends a `key-refused` event) or,
   * after a refusal, accepted again (`key-accepted` event); answers once the first attempt is done.
   */
  watchKey: { args: { key: string; intervalMs: number; timeoutMs: number }; result: { firstAttemptOk: boolean } };
  setActive: { args: { accountId: string; keyId: string; isActive: boolean }; result: { at: number } };
  revoke: { args: { accountId: string; keyId: string }; result: { at: number } };
  /**
   * An HTTP request answered by this process's gateway (in process); `at` is when its answer was complete.
   * With `dropBody` the body stays here (large answers would take long to cross the IPC channel).
   */
  inject: {
    args: {
      method: 'GET' | 'POST';
      url: string;
      headers: Record<string, string>;
      payload?: Record<string, unknown>;
      dropBody?: boolean;
    };
    result: { statusCode: number; body: string; at: number };
  };
  /** Whether the process receives every storage event now (its LISTEN connection is up: Storage.listening). */
  listening: { args: Record<string, never>; result: { listening: boolean } };
  /** Closes the gateway gracefully, then the process exits 0. */
  close: { args: Record<string, never>; result: { closed: true } };
}

export type WorkerCommand = keyof WorkerCommands;

type WorkerRequest = {
  [C in WorkerCommand]: { type: 'request'; id: number; cmd: C; args: WorkerCommands[C]['args'] };
}[WorkerCommand];

export interface WorkerEvent {
  type: 'event';
  name: 'key-refused' | 'key-accepted' | 'watch-timeout';
  /** Epoch ms when it happened. */
  at: number;
  acceptedCount: number;
}

type WorkerMessage =
  | { type: 'ready'; instanceId: string; pid: number }
  | { type: 'response'; id: number; ok: true; result: unknown }
  | { type: 'response'; id: number; ok: false; error: { code?: string; message: string } }
  | WorkerEvent;

const optionsVariable = 'LEDGER_WORKER_OPTIONS';
const workerFile = fileURLToPath(import.meta.url);
const repositoryRoot = path.resolve(path.dirname(workerFile), '../..');

/** Deterministic PRNG (mulberry32), so a failing storm can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** A cost between 0 and `max` inclusive, with both ends likely. */
export function randomCost(random: () => number, max: bigint): bigint {
  const r = random();
  if (r < 0.1) return 0n;
  if (r < 0.2) return max;
  return (max * BigInt(Math.floor(random() * 1_000_000))) / 1_000_000n;
}

// ---------------------------------------------------------------------------------------------------------
// Parent side
// ---------------------------------------------------------------------------------------------------------

const liveWorkers = new Set<LedgerWorker>();

export class LedgerWorker {
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }
  >();
  private readonly eventListeners: Array<(event: WorkerEvent) => void> = [];
  private output = '';
  private exitInfo: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  instanceId = '';

  constructor(readonly child: ChildProcess) {
    const collect = (chunk: Buffer) => {
      this.output = (this.output + chunk.toString('utf8')).slice(-8_000);
    };
    child.stdout?.on('data', collect);
    child.stderr?.on('data', collect);
    this.exited = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exitInfo = { code, signal };
        liveWorkers.delete(this);
        for (const [id, waiter] of this.pending) {
          clearTimeout(waiter.timer);
          waiter.reject(
            new Error(
              `ledger worker ${child.pid} exited (${code ?? signal}) before answering request ${id}; output:\n${this.output}`,
            ),
          );
        }
        this.pending.clear();
        resolve({ code, signal });
      });
    });
    child.on('message', (raw) => {
      const message = raw as WorkerMessage;
      if (message.type === 'response') {
        const waiter = this.pending.get(message.id);
        if (!waiter) return;
        this.pending.delete(message.id);
        clearTimeout(waiter.timer);
        if (message.ok) waiter.resolve(message.result);
        else waiter.reject(Object.assign(new Error(message.error.message), { code: message.error.code }));
      } else if (message.type === 'event') {
        for (const listener of this.eventListeners) listener(message);
      }
    });
    liveWorkers.add(this);
  }

  get pid(): number {
    return this.child.pid ?? -1;
  }

  get recentOutput(): string {
    return this.output;
  }

  get hasExited(): boolean {
    return this.exitInfo !== undefined;
  }

  call<C extends WorkerCommand>(
    cmd: C,
    args: WorkerCommands[C]['args'],
    timeoutMs = 30_000,
  ): Promise<WorkerCommands[C]['result']> {
    if (this.exitInfo)
      return Promise.reject(new Error(`ledger worker ${this.pid} has exited; output:\n${this.output}`));
    const id = this.nextId++;
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(
          new Error(`ledger worker ${this.pid}: no answer to ${cmd} within ${timeoutMs} ms; output:\n${this.output}`),
        );
      }, timeoutMs);
      this.pending.set(id, { resolve: (value) => resolve(value as WorkerCommands[C]['result']), reject, timer });
      this.child.send({ type: 'request', id, cmd, args } as WorkerRequest);
    });
  }

  /** The next event with this name. */
  nextEvent(name: WorkerEvent['name'], timeoutMs: number): Promise<WorkerEvent> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        remove();
        reject(new Error(`ledger worker ${this.pid}: no ${name} event within ${timeoutMs} ms`));
      }, timeoutMs);
      const listener = (event: WorkerEvent) => {
        if (event.name !== name) return;
        clearTimeout(timer);
        remove();
        resolve(event);
      };
      const remove = () => {
        const index = this.eventListeners.indexOf(listener);
        if (index >= 0) this.eventListeners.splice(index, 1);
      };
      this.eventListeners.push(listener);
    });
  }

  /** SIGKILL, and wait until the process is gone. */
  async kill(): Promise<void> {
    if (!this.exitInfo) this.child.kill('SIGKILL');
    await this.exited;
  }

  /** Asks the process to close its gateway and exit; kills it if it has not within `timeoutMs`. */
  async stop(timeoutMs = 10_000): Promise<void> {
    if (this.exitInfo) return;
    const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
    try {
      await this.call('close', {}, timeoutMs).catch(() => undefined);
      await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }
}

/** Forks a worker and waits until its gateway is open. */
export async function startLedgerWorker(options: LedgerWorkerOptions, startTimeoutMs = 60_000): Promise<LedgerWorker> {
  const child = fork(workerFile, [], {
    cwd: repositoryRoot,
    execArgv: ['--import', 'tsx'],
    env: { ...process.env, [optionsVariable]: JSON.stringify(options) },
    serialization: 'advanced',
    stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
  });
  const worker = new LedgerWorker(child);
  const ready = new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () =>
        reject(
          new Error(
            `ledger worker ${worker.pid} not ready within ${startTimeoutMs} ms; output:\n${worker.recentOutput}`,
          ),
        ),
      startTimeoutMs,
    );
    child.on('message', (raw) => {
      const message = raw as WorkerMessage;
      if (message.type !== 'ready') return;
      clearTimeout(timer);
      worker.instanceId = message.instanceId;
      resolve();
    });
    void worker.exited.then(({ code, signal }) => {
      clearTimeout(timer);
      reject(
        new Error(
          `ledger worker ${worker.pid} exited (${code ?? signal}) while starting; output:\n${worker.recentOutput}`,
        ),
      );
    });
  });
  try {
    await ready;
  } catch (error) {
    await worker.kill();
    throw error;
  }
  return worker;
}

/** Kills every worker this process started that is still running (for afterEach/afterAll). */
export async function stopAllLedgerWorkers(): Promise<void> {
  await Promise.all([...liveWorkers].map((worker) => worker.kill()));
}

// ---------------------------------------------------------------------------------------------------------
// Child side
// ---------------------------------------------------------------------------------------------------------

async function runWorker(options: LedgerWorkerOptions): Promise<void> {
  const send = (message: WorkerMessage) => {
    if (process.connected) process.send?.(message);
  };
  // Whatever happens, never outlive the test that started us.
  setTimeout(() => process.exit(3), options.lifetimeMs);
  process.on('disconnect', () => process.exit(4));

  const environment = readEnvironment({
    DATA_DIR: options.dataDir,
    GATEWAY_SECRET: 'test-secret-0123456789abcdef0123456789abcdef',
    LOG_LEVEL: 'silent',
    ...(options.storage.kind === 'postgres' ? { DATABASE_URL: options.storage.url } : {}),
  });
  const config = parseConfig(options.configText, 'ledger-worker-gateway.yaml', environment.variables);
  const logger = pino({ level: 'silent' });
  const gateway: RunningGateway = await createGateway({
    environment,
    config,
    // Small pools: several gateway processes and test files share one PostgreSQL server.
    storage:
      options.storage.kind === 'postgres'
        ? { kind: 'postgres', url: options.storage.url, poolSize: 10 }
        : options.storage,
    logger,
  });
  const services = gateway.core.services;
  // Open the pool's connections now, so a storm starts on warm connections.
  await Promise.all(Array.from({ length: 10 }, () => gateway.core.storage.db.execute(sql`SELECT pg_sleep(0.02)`)));
  const holds = new Map<string, Reservation>();
  const sleepUntil = async (at: number) => {
    const delay = at - Date.now();
    if (delay > 0) await new Promise((resolve) => setTimeout(resolve, delay));
  };
  const settleRandomly = async (toSettle: Reservation[], seed: number): Promise<SettleResult> => {
    const random = seededRandom(seed);
    const costs = toSettle.map((hold) => randomCost(random, hold.amountNanos));
    const settled = await Promise.all(
      toSettle.map((hold, index) =>
        hold.settle({ costNanos: costs[index] ?? 0n, modality: 'text', status: 'succeeded' }),
      ),
    );
    const result: SettleResult = { settledCostNanos: 0n, settledCount: 0, settledWithoutHold: 0 };
    for (const settlement of settled) {
      result.settledCostNanos += settlement.costNanos;
      result.settledCount += 1;
      if (!settlement.holdWasOutstanding) result.settledWithoutHold += 1;
    }
    return result;
  };

  const handlers: { [C in WorkerCommand]: (args: WorkerCommands[C]['args']) => Promise<WorkerCommands[C]['result']> } =
    {
      createFundedKey: async ({ credits, limits }) => {
        const account = await services.accounts.createAccount({
          email: `worker-${process.pid}-${Date.now()}-${Math.random()}@example.com`,
          creditsUsd: credits,
        });
        const key = await services.apiKeys.create(account.id, { name: 'worker key', limits });
        return { accountId: account.id, keyId: key.id, key: key.key };
      },
      holdStorm: async ({ accountId, apiKeyId, count, amountNanos, startAt, settleSeed }) => {
        await sleepUntil(startAt);
        const outcomes = await Promise.allSettled(
          Array.from({ length: count }, () =>
            services.ledger.reserve({ accountId, apiKeyId, amountNanos, modelId: 'sandbox-echo' }),
          ),
        );
        const result: StormResult = {
          admitted: 0,
          refusals: {},
          refusalMessages: [],
          unexpected: [],
          settledCostNanos: 0n,
          settledCount: 0,
          settledWithoutHold: 0,
        };
        const admitted: Reservation[] = [];
        for (const outcome of outcomes) {
          if (outcome.status === 'fulfilled') {
            admitted.push(outcome.value);
          } else if (isGatewayError(outcome.reason)) {
            const error = outcome.reason;
            const label = `${error.code}/${error.status}`;
            result.refusals[label] = (result.refusals[label] ?? 0) + 1;
            if (!result.refusalMessages.includes(error.message)) result.refusalMessages.push(error.message);
          } else {
            result.unexpected.push(String(outcome.reason));
          }
        }
        result.admitted = admitted.length;
        if (settleSeed === undefined) {
          for (const hold of admitted) holds.set(hold.id, hold);
          return result;
        }
        return { ...result, ...(await settleRandomly(admitted, settleSeed)) };
      },
      settleAll: async ({ seed, startAt }) => {
        await sleepUntil(startAt);
        const all = [...holds.values()];
        holds.clear();
        return settleRandomly(all, seed);
      },
      hold: async ({ accountId, apiKeyId, amountNanos }) => {
        const hold = await services.ledger.reserve({ accountId, apiKeyId, amountNanos, modelId: 'sandbox-echo' });
        holds.set(hold.id, hold);
        return { holdId: hold.id };
      },
      settle: async ({ holdId, costNanos }) => {
        const hold = holds.get(holdId);
        if (!hold) throw new Error(`no hold ${holdId} in this process`);
        holds.delete(holdId);
        const settled = await hold.settle({ costNanos, modality: 'text', status: 'succeeded' });
        return { holdWasOutstanding: settled.holdWasOutstanding };
      },
      release: async ({ holdId }) => {
        const hold = holds.get(holdId);
        if (!hold) throw new Error(`no hold ${holdId} in this process`);
        holds.delete(holdId);
        await hold.release();
        return { released: true };
      },
      giveBackUnused: async () => {
        await services.ledger.giveBackUnused();
        return { done: true };
      },
      state: async ({ accountId, keyId }) => {
        const db = gateway.core.storage.db;
        const [account] = await db.select().from(accounts).where(eq(accounts.id, accountId));
        const [key] = await db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
        if (!account || !key) throw new Error('no such account or key');
        const rows = await db
          .select({ id: holdsTable.id, amountNanos: holdsTable.amountNanos, instanceId: holdsTable.instanceId })
          .from(holdsTable)
          .where(eq(holdsTable.accountId, accountId));
        return {
          balanceNanos: account.balanceNanos,
          heldNanos: account.heldNanos,
          keyHeldNanos: key.heldNanos,
          keySpentNanos: key.spentTotalNanos,
          holds: rows,
        };
      },
      authenticate: async ({ key }) => {
        try {
          await services.authenticator.authenticate(key, 'x-api-key');
          return { ok: true };
        } catch (error) {
          return { ok: false, code: isGatewayError(error) ? error.code : String(error) };
        }
      },
      watchKey: async ({ key, intervalMs, timeoutMs }) => {
        const attempt = async () => {
          try {
            await services.authenticator.authenticate(key, 'x-api-key');
            return true;
          } catch {
            return false;
          }
        };
        const firstAttemptOk = await attempt();
        let accepting = firstAttemptOk;
        let acceptedCount = firstAttemptOk ? 1 : 0;
        const deadline = Date.now() + timeoutMs;
        const loop = async () => {
          while (Date.now() < deadline) {
            await new Promise((resolve) => setTimeout(resolve, intervalMs));
            const ok = await attempt();
            if (ok) acceptedCount += 1;
            if (ok !== accepting) {
              accepting = ok;
              send({ type: 'event', name: ok ? 'key-accepted' : 'key-refused', at: Date.now(), acceptedCount });
            }
          }
          send({ type: 'event', name: 'watch-timeout', at: Date.now(), acceptedCount });
        };
        void loop();
        return { firstAttemptOk };
      },
      setActive: async ({ accountId, keyId, isActive }) => {
        await services.apiKeys.update(accountId, keyId, { isActive });
        return { at: Date.now() };
      },
      revoke: async ({ accountId, keyId }) => {
        await services.apiKeys.revoke(accountId, keyId);
        return { at: Date.now() };
      },
      inject: async ({ method, url, headers, payload, dropBody }) => {
        const response = await gateway.app.inject({ method, url, headers, ...(payload ? { payload } : {}) });
        return { statusCode: response.statusCode, body: dropBody ? '' : response.body, at: Date.now() };
      },
      listening: async () => ({ listening: gateway.core.storage.listening() }),
      close: async () => {
        await gateway.close();
        setImmediate(() => process.exit(0));
        return { closed: true };
      },
    };

  process.on('message', (raw) => {
    const request = raw as WorkerRequest;
    if (request.type !== 'request') return;
    const handler = handlers[request.cmd] as (args: unknown) => Promise<unknown>;
    handler(request.args).then(
      (result) => send({ type: 'response', id: request.id, ok: true, result }),
      (error: unknown) =>
        send({
          type: 'response',
          id: request.id,
          ok: false,
          error: {
            code: isGatewayError(error) ? error.code : undefined,
            message: error instanceof Error ? error.message : String(error),
          },
        }),
    );
  });
  send({ type: 'ready', instanceId: gateway.core.instanceId, pid: process.pid });
}

const workerOptions = process.env[optionsVariable];
if (workerOptions && process.send) {
  runWorker(JSON.parse(workerOptions) as LedgerWorkerOptions).catch((error: unknown) => {
    console.error('ledger worker failed:', error);
    process.exit(1);
  });
}
