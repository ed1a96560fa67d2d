/**
 * One hot account spread over many gateway processes: N simulated processes, each with the real credit ledger
 * of a process (src/billing/credit-ledger.ts, its credit leases and its own batching ledger repository, an
 * instance id of its own, and the request to the others to give back credit through the database's
 * LISTEN/NOTIFY, as src/core.ts wires it), admit the benchmark's chat completion against one account and one
 * key, `--in-flight` requests at a time each, every request held for a few milliseconds and then settled.
 * The processes share one connection pool here (a pool per process would take N times the server's
 * connections); what each process sends is its own.
 *
 * Two runs per N, in a database made for the run on the server of `TEST_DATABASE_URL` and dropped after it:
 * - ample: the account holds far more than the run spends, for `--seconds`: how many admissions waited for a
 *   statement (a lease extension) rather than being served from memory, the extensions and give-backs;
 * - scarce: the account holds `--scarce-usd`, spent to the end: every request is admitted or refused, and the
 *   account is read every 20 ms meanwhile and at the end. Spend never past the balance: the balance never
 *   below zero and the held sum never above it; the charges of the usage records equal the balance's
 *   decrease; nothing is held once the processes stop; and what is left unspent is less than one request's
 *   hold (no credit stranded in another process's lease while a request was refused).
 *
 *   TEST_DATABASE_URL=postgres://postgres@127.0.0.1:5432/test npm exec -- tsx bench/lease-simulation.ts
 *                     [--processes 1,2,4,8,16,32] [--in-flight 4] [--seconds 5] [--scarce-usd 0.05] [--hold-ms 2]
 */
import { setImmediate as nextTurn, setTimeout as sleep } from 'node:timers/promises';
import { parseArgs } from 'node:util';
import { eq, sum } from 'drizzle-orm';
import { isGatewayError } from '../src/domain/errors.ts';
import { newId } from '../src/domain/ids.ts';
import { usdToNanos } from '../src/domain/money.ts';
import { openStorage } from '../src/storage/database.ts';
import { accounts, generations } from '../src/storage/schema.ts';
import {
  chatHoldNanos,
  chatSettlement,
  fundedAccount,
  processLedger,
  scratchDatabase,
  type LeaseCounts,
} from './capacity-support.ts';

const { values: options } = parseArgs({
  options: {
    processes: { type: 'string', default: '1,2,4,8,16,32' },
    'in-flight': { type: 'string', default: '4' },
    seconds: { type: 'string', default: '5' },
    'scarce-usd': { type: 'string', default: '0.05' },
    'hold-ms': { type: 'string', default: '2' },
  },
});
const serverUrl = process.env.TEST_DATABASE_URL;
if (!serverUrl)
  throw new Error('TEST_DATABASE_URL: the PostgreSQL server to simulate on (a database is made there and dropped)');
const processCounts = options.processes.split(',').map(Number);
const inFlight = Number(options['in-flight']);
const seconds = Number(options.seconds);
const scarceUsd = Number(options['scarce-usd']);
const holdMs = Number(options['hold-ms']);
/** How long a process waits after asking the others to give back credit (src/core.ts). */
const peerGiveBackWaitMs = 100;

interface Outcome {
  admitted: number;
  /** Admissions that waited for a statement: not served within the turn of the event loop they were asked in. */
  waited: number;
  waitedMs: number[];
  refused: number;
  /** Refusals while the account and key had at least the hold free, as read right after the refusal. */
  refusedWithCreditFree: number;
  counts: LeaseCounts;
  seconds: number;
}

const database = await scratchDatabase(serverUrl, 'lease_simulation');
const storage = await openStorage({ kind: 'postgres', url: database.url, poolSize: 20 });
try {
  const ample = [
    `| processes | in flight | admitted | admitted from memory | waited for a statement | wait p50 / p99 (ms) | lease extensions | extensions / s / process | give-backs |`,
    '|---|---|---|---|---|---|---|---|---|',
  ];
  const scarce = [
    `| processes | admitted | refused | refused with a hold's credit free | charged (nano-USD) | balance decrease | balance left | lowest balance seen | held above balance seen | held at the end | exact |`,
    '|---|---|---|---|---|---|---|---|---|---|---|',
  ];
  let allExact = true;
  for (const processes of processCounts) {
    const account = await fundedAccount(storage, 1_000_000);
    const run = await simulate({ account, processes, until: 'time' });
    const quantile = (q: number) => {
      const sorted = [...run.waitedMs].sort((a, b) => a - b);
      return (sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? Number.NaN).toFixed(1);
    };
    ample.push(
      `| ${[
        processes,
        processes * inFlight,
        run.admitted,
        `${(((run.admitted - run.waited) / run.admitted) * 100).toFixed(2)}%`,
        run.waited,
        `${quantile(0.5)} / ${quantile(0.99)}`,
        run.counts.extensions,
        (run.counts.extensions / run.seconds / processes).toFixed(2),
        run.counts.giveBacks,
      ].join(' | ')} |`,
    );
    process.stderr.write(`ample: ${ample.at(-1)}\n`);

    const creditsNanos = usdToNanos(scarceUsd);
    const poor = await fundedAccount(storage, scarceUsd);
    const watch = watchAccount(poor.accountId);
    const spent = await simulate({ account: poor, processes, until: 'refused' });
    const seen = await watch.stop();
    const [end] = await storage.db.select().from(accounts).where(eq(accounts.id, poor.accountId));
    const [charged] = await storage.db
      .select({ nanos: sum(generations.usdCostNanos) })
      .from(generations)
      .where(eq(generations.accountId, poor.accountId));
    const chargedNanos = BigInt(charged?.nanos ?? 0);
    const decrease = creditsNanos - end!.balanceNanos;
    const exact =
      chargedNanos === decrease &&
      seen.lowestBalance >= 0n &&
      !seen.heldAboveBalance &&
      end!.heldNanos === 0n &&
      end!.balanceNanos < chatHoldNanos;
    allExact &&= exact;
    scarce.push(
      `| ${[
        processes,
        spent.admitted,
        spent.refused,
        spent.refusedWithCreditFree,
        chargedNanos,
        decrease,
        end!.balanceNanos,
        seen.lowestBalance,
        seen.heldAboveBalance ? 'yes' : 'never',
        end!.heldNanos,
        exact ? 'yes' : '**no**',
      ].join(' | ')} |`,
    );
    process.stderr.write(`scarce: ${scarce.at(-1)}\n`);
  }
  process.stdout.write(
    [
      `Ample credit, ${seconds} s, ${inFlight} requests in flight per process, each held ${holdMs} ms:`,
      '',
      ...ample,
      '',
      `Scarce credit: ${scarceUsd} USD (${usdToNanos(scarceUsd)} nano-USD), spent to the end; each request holds ${chatHoldNanos} and costs ${chatSettlement().costNanos} nano-USD:`,
      '',
      ...scarce,
      '',
    ].join('\n'),
  );
  if (!allExact) process.exitCode = 1;
} finally {
  await storage.close();
  await database.drop();
}

/**
 * `processes` simulated gateway processes admitting against one account and key, `inFlight` requests each at
 * a time, for `seconds` (`time`) or until each of their requests has been refused once (`refused`).
 */
async function simulate({
  account,
  processes,
  until,
}: {
  account: { accountId: string; apiKeyId: string };
  processes: number;
  until: 'time' | 'refused';
}): Promise<Outcome> {
  const outcome: Outcome = {
    admitted: 0,
    waited: 0,
    waitedMs: [],
    refused: 0,
    refusedWithCreditFree: 0,
    counts: { extensions: 0, refusedExtensions: 0, giveBacks: 0 },
    seconds: 0,
  };
  const members = Array.from({ length: processes }, () => {
    const member = processLedger(storage, {
      instanceId: newId('inst'),
      askPeers: (accountId) =>
        storage.publish({ type: 'give-back-credit', accountId }).then(() => sleep(peerGiveBackWaitMs)),
    });
    const unsubscribe = storage.subscribe((event) => member.ledger.handleEvent(event));
    return { ...member, unsubscribe };
  });
  const deadline = Date.now() + seconds * 1000;
  const started = process.hrtime.bigint();
  const request = async (ledger: (typeof members)[number]['ledger']): Promise<boolean> => {
    const asked = process.hrtime.bigint();
    let served = false;
    const reservation = ledger
      .reserve({
        ...account,
        amountNanos: chatHoldNanos,
        modelId: 'bench-chat',
        whatFits: (free) => {
          if (free >= chatHoldNanos) outcome.refusedWithCreditFree++;
          return undefined;
        },
      })
      .finally(() => (served = true));
    // An admission out of a lease in memory resolves in this turn's microtasks, before the next turn.
    await nextTurn();
    const fromMemory = served;
    try {
      const admitted = await reservation;
      outcome.admitted++;
      if (!fromMemory) {
        outcome.waited++;
        outcome.waitedMs.push(Number(process.hrtime.bigint() - asked) / 1e6);
      }
      await sleep(holdMs);
      await admitted.settle(chatSettlement());
      return true;
    } catch (error) {
      if (!isGatewayError(error)) throw error;
      outcome.refused++;
      return false;
    }
  };
  const worker = async (ledger: (typeof members)[number]['ledger']) => {
    if (until === 'time') while (Date.now() < deadline) await request(ledger);
    else while (await request(ledger));
  };
  await Promise.all(members.flatMap((member) => Array.from({ length: inFlight }, () => worker(member.ledger))));
  outcome.seconds = Number(process.hrtime.bigint() - started) / 1e9;
  for (const member of members) {
    await member.ledger.close();
    member.unsubscribe();
    if (member.failures.length > 0) throw new Error(`storage refused ledger work: ${String(member.failures[0])}`);
    outcome.counts.extensions += member.counts.extensions;
    outcome.counts.refusedExtensions += member.counts.refusedExtensions;
    outcome.counts.giveBacks += member.counts.giveBacks;
  }
  return outcome;
}

/** Reads the account every 20 ms until stopped: the lowest balance, and whether it ever held more than its balance. */
function watchAccount(accountId: string): { stop(): Promise<{ lowestBalance: bigint; heldAboveBalance: boolean }> } {
  let lowestBalance: bigint | undefined;
  let heldAboveBalance = false;
  let running = true;
  const reading = (async () => {
    while (running) {
      const [row] = await storage.db.select().from(accounts).where(eq(accounts.id, accountId));
      if (row) {
        if (lowestBalance === undefined || row.balanceNanos < lowestBalance) lowestBalance = row.balanceNanos;
        if (row.heldNanos > row.balanceNanos) heldAboveBalance = true;
      }
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await reading;
      return { lowestBalance: lowestBalance ?? 0n, heldAboveBalance };
    },
  };
}
