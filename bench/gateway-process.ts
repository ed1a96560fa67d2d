// The gateway under test, in a process of its own, on the full billing path (auth, gating, hold, settle, record).
// Storage is the default of `npm start` (embedded, under BENCH_DATA_DIR, a new temporary folder when unset), or
// PostgreSQL at BENCH_DATABASE_URL. Logs on stdout as `npm start` does (the harness points it at a file of the
// run); tells the harness over IPC once it listens, and answers it there.
// It runs the compiled gateway of dist/ (what `npm start` runs), on Node's own type stripping for this file:
// no TypeScript loader is in the measured process.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { count, eq, sum } from 'drizzle-orm';
import type * as Environment from '../src/config/environment.ts';
import type * as LoadConfig from '../src/config/load-config.ts';
import type * as Main from '../src/main.ts';
import type * as Schema from '../src/storage/schema.ts';
import { chatPricing } from './pricing.ts';

// BENCH_PHASE_CLOCK=1 (`npm run bench:phases`): the moments of each request, from the process's diagnostics channels.
const phaseClock = process.env.BENCH_PHASE_CLOCK === '1' ? await import('./phase-clock.ts') : undefined;

// BENCH_DIST_DIR: another checkout's compiled gateway (`npm run bench:compare`), run by this same harness.
const distDir = process.env.BENCH_DIST_DIR ?? path.join(import.meta.dirname, '../dist');
const compiled = async <Module>(file: string): Promise<Module> =>
  (await import(pathToFileURL(path.join(distDir, file)).href)) as Module;
const { readEnvironment } = await compiled<typeof Environment>('config/environment.js');
const { parseConfig } = await compiled<typeof LoadConfig>('config/load-config.js');
const { createGateway, createLogger } = await compiled<typeof Main>('main.js');
const { accounts, generations } = await compiled<typeof Schema>('storage/schema.js');

const upstream = process.env.BENCH_UPSTREAM_URL;
const upstreamKey = process.env.BENCH_UPSTREAM_KEY;
if (!upstream || !upstreamKey) throw new Error('BENCH_UPSTREAM_URL and BENCH_UPSTREAM_KEY are required');
const dataDir = process.env.BENCH_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'gw-bench-'));
const databaseUrl = process.env.BENCH_DATABASE_URL;
const environment = readEnvironment({
  DATA_DIR: dataDir,
  GATEWAY_SECRET: 'bench-secret-0123456789abcdef0123456789',
  LOG_LEVEL: process.env.BENCH_LOG_LEVEL ?? 'warn',
  ...(databaseUrl ? { DATABASE_URL: databaseUrl } : {}),
});
// The slow-streams test's model: the fake's slow generation (one chunk a second), priced as bench-chat.
const slowModel = process.env.BENCH_SLOW_UPSTREAM_MODEL ?? 'fake-drip-1000-60';
const config = parseConfig(
  [
    'providers:',
    `  upstream: { protocol: openai, baseUrl: "${upstream}/v1", apiKey: ${upstreamKey} }`,
    '  sandbox: { protocol: sandbox, maxConcurrentJobs: 64 }',
    'models:',
    '  - id: bench-chat',
    `    pricing: { inputPerMTok: ${chatPricing.inputPerMTok}, outputPerMTok: ${chatPricing.outputPerMTok} }`,
    '    providers: [{ provider: upstream, model: gpt-4o-mini }]',
    '  - id: bench-slow-chat',
    `    pricing: { inputPerMTok: ${chatPricing.inputPerMTok}, outputPerMTok: ${chatPricing.outputPerMTok} }`,
    `    providers: [{ provider: upstream, model: ${slowModel} }]`,
    '  - id: bench-image',
    '    outputModalities: [image]',
    '    pricing: { perImage: 0.001 }',
    '    providers: [{ provider: sandbox, model: image }]',
    '  - id: bench-embedding',
    '    outputModalities: [embedding]',
    '    pricing: { inputPerMTok: 0.02 }',
    '    providers: [{ provider: upstream, model: text-embedding-3-small }]',
    // Job workers: as many jobs at once as the sandbox row takes, and idle workers that look for work often.
    'jobs: { concurrency: 64, idlePollMs: 200 }',
  ].join('\n'),
  'bench.yaml',
  environment.variables,
);
// The build's own logger, as `npm start` makes it: at `info` its request and generation lines, as in production.
const logger = createLogger(environment);
// No storage option: the same choice as `npm start` (DATABASE_URL, else the embedded default under DATA_DIR).
const gateway = await createGateway({ environment, config, logger });
const url = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
process.send!({ ready: { url, node: process.version, storage: gateway.core.storage.kind } });

const services = gateway.core.services;
const db = gateway.core.storage.db;

type Request = { id: number } & (
  | { type: 'stats' }
  | { type: 'account'; creditsUsd: number }
  | { type: 'billing'; accountId: string }
  | { type: 'phases' }
);

/** A new account holding `creditsUsd`, with one key (a daily cap high enough never to refuse). */
async function newAccount(creditsUsd: number): Promise<{ accountId: string; key: string }> {
  const account = await services.accounts.createAccount({
    email: `bench-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    creditsUsd,
  });
  // BENCH_KEY_REQUESTS_PER_MINUTE: the key is admitted through the rate limiter (bench:compare --ours-requests-per-minute);
  // with BENCH_KEY_ALL_LIMITS, the same figure is also its tokens per minute and requests in flight (--ours-all-limits).
  const requestsPerMinute = Number(process.env.BENCH_KEY_REQUESTS_PER_MINUTE ?? 0);
  const allLimits = process.env.BENCH_KEY_ALL_LIMITS === '1';
  const rateLimits = allLimits
    ? { requestsPerMinute, tokensPerMinute: requestsPerMinute, concurrentRequests: requestsPerMinute }
    : { requestsPerMinute };
  const key = await services.apiKeys.create(account.id, {
    name: 'bench',
    limits: { daily: 100_000 },
    ...(requestsPerMinute > 0 ? { rateLimits } : {}),
  });
  return { accountId: account.id, key: key.key };
}

/** What storage holds for an account once in-flight generations have settled; nano-USD amounts as decimal strings. */
async function billing(accountId: string) {
  await gateway.core.work.idle(30_000);
  // Credit leased for the account and no longer used goes back when the lease is idle; count it back now.
  await gateway.core.services.ledger.giveBackUnused();
  const [totals] = await db
    .select({ records: count(), charged: sum(generations.usdCostNanos) })
    .from(generations)
    .where(eq(generations.accountId, accountId));
  const statuses = await db
    .select({ status: generations.status, records: count() })
    .from(generations)
    .where(eq(generations.accountId, accountId))
    .groupBy(generations.status);
  const [account] = await db
    .select({ balance: accounts.balanceNanos, held: accounts.heldNanos })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return {
    records: totals?.records ?? 0,
    chargedNanos: String(totals?.charged ?? '0'),
    statuses: Object.fromEntries(statuses.map((row) => [row.status, row.records])),
    balanceNanos: String(account?.balance),
    heldNanos: String(account?.held),
    settling: gateway.core.work.size,
  };
}

process.on('message', (message: Request) => {
  const answer = async (): Promise<object> => {
    if (message.type === 'stats')
      return { cpu: process.cpuUsage(), rss: process.memoryUsage().rss, heapUsed: process.memoryUsage().heapUsed };
    if (message.type === 'account') return newAccount(message.creditsUsd);
    if (message.type === 'phases') return { samples: phaseClock?.takePhaseSamples() ?? [] };
    return billing(message.accountId);
  };
  answer().then(
    (result) => process.send?.({ ...result, id: message.id }),
    (error: Error) => process.send?.({ id: message.id, error: error.message }),
  );
});
process.on('SIGTERM', () => {
  void gateway.close().then(() => process.exit(0));
});
