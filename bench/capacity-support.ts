// What the capacity scripts (ledger-cost.ts, lease-simulation.ts) share: a scratch database made and dropped
// on a PostgreSQL server, a funded account with a key, the real credit ledger of one simulated gateway process
// with its storage calls counted, and the settlement of a chat completion like the benchmark's.
import { randomBytes } from 'node:crypto';
import pg from 'pg';
import { CreditLedger, type Settlement } from '../src/billing/credit-ledger.ts';
import { newId } from '../src/domain/ids.ts';
import { usdToNanos } from '../src/domain/money.ts';
import { AccountsRepository } from '../src/storage/accounts-repository.ts';
import type { Storage } from '../src/storage/database.ts';
import { LedgerRepository, type LeaseExtension, type LeaseGrant } from '../src/storage/ledger-repository.ts';
import { apiKeys } from '../src/storage/schema.ts';
import { chatPricing, nanosPerToken } from './pricing.ts';

/** `url` with its database name replaced. */
export function withDatabase(url: string, name: string): string {
  return url.replace(/^(postgres(?:ql)?:\/\/[^/?]*\/)([^?]*)/, `$1${name}`);
}

/** Runs one statement on the database of `url` (the server's own for CREATE and DROP DATABASE), on a connection of its own. */
export async function queryOnce<Row extends pg.QueryResultRow>(
  url: string,
  text: string,
  values: unknown[] = [],
): Promise<Row[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<Row>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** A new empty database on the server of `serverUrl`, named after `purpose`; `drop` removes it. */
export async function scratchDatabase(
  serverUrl: string,
  purpose: string,
): Promise<{ name: string; url: string; drop(): Promise<void> }> {
  const name = `gw_${purpose}_${randomBytes(4).toString('hex')}`;
  await queryOnce(serverUrl, `CREATE DATABASE ${name}`);
  return {
    name,
    url: withDatabase(serverUrl, name),
    drop: async () => void (await queryOnce(serverUrl, `DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/** An account holding `creditsUsd` and one active key of it without caps, inserted as the services insert them. */
export async function fundedAccount(
  storage: Storage,
  creditsUsd: number,
): Promise<{ accountId: string; apiKeyId: string }> {
  const accountId = newId('acct');
  const apiKeyId = newId('key');
  await new AccountsRepository(storage.db).create({
    id: accountId,
    email: `${accountId}@capacity.example`,
    passwordHash: null,
    creditsNanos: usdToNanos(creditsUsd),
    grantId: newId('grant'),
    note: 'capacity measurement',
  });
  await storage.db.insert(apiKeys).values({
    id: apiKeyId,
    accountId,
    name: 'capacity',
    displayPrefix: 'sk-capacity',
    lookupHash: apiKeyId,
    sealedKey: 'not a key',
  });
  return { accountId, apiKeyId };
}

/** Storage calls of one ledger that are not one per request: lease extensions and give-backs. */
export interface LeaseCounts {
  extensions: number;
  /** Extensions that were refused (the account or key had not enough free). */
  refusedExtensions: number;
  giveBacks: number;
}

/** The ledger repository, counting the lease statements its credit leases send. */
class CountingLedgerRepository extends LedgerRepository {
  readonly counts: LeaseCounts = { extensions: 0, refusedExtensions: 0, giveBacks: 0 };

  override async extendLease(input: LeaseExtension): Promise<LeaseGrant> {
    this.counts.extensions++;
    const grant = await super.extendLease(input);
    if (grant.outcome !== 'ok') this.counts.refusedExtensions++;
    return grant;
  }

  override shrinkLease(leaseId: string, amountNanos: bigint): Promise<bigint> {
    this.counts.giveBacks++;
    return super.shrinkLease(leaseId, amountNanos);
  }
}

/** What `ledger.leaseMaxUsd` and `ledger.leaseIdleMs` default to (src/config/load-config.ts). */
export const defaultLeases = { maxLeaseNanos: usdToNanos(1), idleMs: 2_000 };

/**
 * The credit ledger of one gateway process on `storage`, built as src/core.ts builds it: leases at the
 * configuration's defaults and, where `askPeers` is given, the request to other processes to give back credit.
 */
export function processLedger(
  storage: Storage,
  { instanceId, askPeers }: { instanceId: string; askPeers?: (accountId: string) => Promise<void> },
): { ledger: CreditLedger; counts: LeaseCounts; failures: unknown[] } {
  const repository = new CountingLedgerRepository(storage);
  // Storage refusing a settlement or a give-back: kept, for the script to report rather than a figure.
  const failures: unknown[] = [];
  const ledger = new CreditLedger(repository, instanceId, {
    leases: { ...defaultLeases, ...(askPeers ? { askPeers } : {}) },
    reportFailure: (error) => failures.push(error),
    reportLeaseFailure: (error) => failures.push(error),
  });
  return { ledger, counts: repository.counts, failures };
}

/**
 * The benchmark's chat completion (bench/load.ts): its hold (one token per byte of the 60-byte prompt plus 8,
 * and the 64 tokens of `max_tokens`) and its cost (10 input and 11 output tokens), at the bench-chat price.
 */
export const chatHoldNanos =
  68n * nanosPerToken(chatPricing.inputPerMTok) + 64n * nanosPerToken(chatPricing.outputPerMTok);
const chatCostNanos = 10n * nanosPerToken(chatPricing.inputPerMTok) + 11n * nanosPerToken(chatPricing.outputPerMTok);

/** The settlement of that completion, with a usage record of the size the alpha surface writes for it. */
export function chatSettlement(costNanos = chatCostNanos): Settlement {
  return {
    costNanos,
    modality: 'text',
    status: 'succeeded',
    request: { surface: 'alpha', endpoint: '/v1/chat/completions', model: 'bench-chat', stream: false, maxTokens: 64 },
    usage: { inputTokens: 10, outputTokens: 11, totalTokens: 21 },
    route: {
      providerId: 'upstream',
      upstreamModel: 'gpt-4o-mini',
      fallbacks: [],
      requestId: randomBytes(16).toString('hex'),
      firstByteMs: 1,
    },
  };
}
