import { setTimeout as sleep } from 'node:timers/promises';
import { connectionFailed } from '../storage/connection-failures.ts';
import { serverErrorOf } from '../storage/logged-errors.ts';
import { statementCutShort } from '../storage/session-limits.ts';

/** What becomes of a write storage refused for now. */
export type RefusedWrite = 'sent again' | 'left for the hold reconciler';

export interface LedgerWritesOptions {
  /** The waits before a refused write is sent again, before it is left for the hold reconciler. */
  retryMs?: readonly number[];
  /** Each refusal of a write that is sent again later: storage is failing, and the hold is kept meanwhile. */
  onRefused: (error: unknown, next: RefusedWrite) => void;
}

/** Half a second, then 2 s, then 8 s: past a failover, a restart of the server, a lock held for seconds. */
const defaultRetryMs = [500, 2_000, 8_000];

/**
 * SQLSTATEs of a statement that may pass when sent again, the database having rolled it back: a lock or
 * statement time-out or an operator's cancel (55P03, 57014), a serialization failure or a deadlock (40001,
 * 40P01), the server out of resources or shutting down (class 53, 57P01-57P03), a connection failing (class 08).
 */
function passesLater(code: string): boolean {
  return (
    code === '40001' ||
    code === '40P01' ||
    code.startsWith('08') ||
    code.startsWith('53') ||
    ['57P01', '57P02', '57P03'].includes(code)
  );
}

/**
 * Whether a refused write may be written by sending it again: the server cancelled or rolled back its statement
 * for a passing reason, or no answer came (the connection failed: the write may even have been committed, which
 * the ledger's writes find when sent again). Any other answer of the database, and any error of the gateway's
 * own (which would be thrown again each time, its hold kept for as long as the process runs), refuses it for good.
 */
export function mayPassLater(error: unknown): boolean {
  const server = serverErrorOf(error);
  if (server === undefined) return connectionFailed(error);
  return statementCutShort(error) || (server.code !== undefined && passesLater(server.code));
}

/**
 * The writes that end holds (a settlement, out of a hold row of its own or out of a lease; a hold row's release),
 * which must reach storage: a hold released instead of settled would leave a generation uncharged, and a hold
 * neither settled nor released would keep its credit until this process stops. Each is sent again while storage
 * refuses it for a passing reason (`mayPassLater`), first after the waits of `retryMs`, then at every heartbeat
 * of the hold reconciler (`resend`) for as long as this process lives, its hold kept meanwhile. Every such write
 * finds its own earlier effect when sent again (the usage record's id; a release of a hold already gone), so one
 * whose answer was lost is applied once. A refusal that would come again (any other answer of the database) ends
 * the write at once.
 */
export class LedgerWrites {
  /** Writes left for the hold reconciler, each its next attempt; true while that attempt runs. */
  private readonly left = new Map<() => Promise<void>, boolean>();
  private readonly retryMs: readonly number[];

  constructor(private readonly options: LedgerWritesOptions) {
    this.retryMs = options.retryMs ?? defaultRetryMs;
  }

  /** Writes left for the hold reconciler, not yet taken by storage. */
  get waiting(): number {
    return this.left.size;
  }

  /** Sends `send` until storage takes it, or refuses it for good; answers what storage answered. */
  async write<T>(send: () => Promise<T>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      try {
        return await send();
      } catch (error) {
        if (!mayPassLater(error)) throw error;
        const wait = this.retryMs[attempt];
        if (wait === undefined) {
          this.options.onRefused(error, 'left for the hold reconciler');
          return this.leave(send);
        }
        this.options.onRefused(error, 'sent again');
        await sleep(wait);
      }
    }
  }

  /** Sends every write left here once more (those not already on their way): the hold reconciler's heartbeat. */
  async resend(): Promise<void> {
    const due = [...this.left].filter(([, sending]) => !sending).map(([attempt]) => attempt);
    await Promise.all(due.map((attempt) => attempt()));
  }

  private leave<T>(send: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const attempt = async (): Promise<void> => {
        this.left.set(attempt, true);
        try {
          const written = await send();
          this.left.delete(attempt);
          resolve(written);
        } catch (error) {
          if (mayPassLater(error)) {
            this.left.set(attempt, false);
            this.options.onRefused(error, 'left for the hold reconciler');
          } else {
            this.left.delete(attempt);
            reject(error);
          }
        }
      };
      this.left.set(attempt, false);
    });
  }
}
