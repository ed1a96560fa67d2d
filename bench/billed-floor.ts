// The benchmark's billed floor: the bare proxy (`bare-proxy.ts`) plus only what the specification makes every
// billed request do, each the cheapest way we know, so that its figures are the ceiling of a billing gateway on
// this runtime, this machine and our database:
// - the key looked up by the HMAC of the presented key in a map held in memory (what our key cache does on a hit);
// - admission against credit leased in memory, extended through the real ledger function when it runs low;
// - a stream asked for its usage (`stream_options`), so the body is written again for streams only;
// - the answer's usage read (a whole answer parsed once; a stream's events scanned for the one with usage);
// - the usage record and the charge written through our one settlement statement (`gw_settle_batch` through
//   the compiled `LedgerRepository`), one statement at a time, as our gateway sends them.
// No Fastify, no protocol check or translation, no catalog, routing, rate limits, caps, logs or metrics.
// Storage as our gateway's: the embedded default under BENCH_DATA_DIR, or PostgreSQL at BENCH_DATABASE_URL.
// Prints `{"url": ...}` on stdout once it listens; BENCH_UPSTREAM_URL is the upstream's origin.
import { createHmac, createSecretKey, randomBytes, randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Pool } from 'undici';
import { answerError, readBody } from './plain-http.ts';
import type * as Database from '../src/storage/database.ts';
import type * as Ledger from '../src/storage/ledger-repository.ts';
import type * as Schema from '../src/storage/schema.ts';

const distDir = process.env.BENCH_DIST_DIR ?? path.join(import.meta.dirname, '../dist');
const compiled = async <Module>(file: string): Promise<Module> =>
  (await import(pathToFileURL(path.join(distDir, file)).href)) as Module;
const { openStorage } = await compiled<typeof Database>('storage/database.js');
const { LedgerRepository } = await compiled<typeof Ledger>('storage/ledger-repository.js');
const { accounts, apiKeys } = await compiled<typeof Schema>('storage/schema.js');

const upstream = process.env.BENCH_UPSTREAM_URL;
if (!upstream) throw new Error('BENCH_UPSTREAM_URL is required');
const databaseUrl = process.env.BENCH_DATABASE_URL;
const storage = await openStorage(
  databaseUrl
    ? { kind: 'postgres', url: databaseUrl }
    : { kind: 'embedded', dataDir: process.env.BENCH_DATA_DIR ?? mkdtempSync(path.join(tmpdir(), 'gw-floor-')) },
);
const ledger = new LedgerRepository(storage);
const pool = new Pool(upstream, { connections: 4096, pipelining: 1, keepAliveTimeout: 30_000 });

/** The bench's prices (bench/pricing.ts is the gateway's chat price; the floor charges one price for every call). */
const nanosPerInputToken = 150n;
const nanosPerOutputToken = 600n;
const instanceId = `floor_${randomUUID()}`;
// A key object, as our gateway's: preparing key bytes on every call costs several times the hash.
const lookupSecret = createSecretKey(randomBytes(32));
const lookupHash = (key: string) => createHmac('sha256', lookupSecret).update(key).digest('base64url');

interface Caller {
  accountId: string;
  apiKeyId: string;
}
const callers = new Map<string, Caller>();

/** An account funded with $1,000,000 and one key, as rows of our schema; the key is answered once. */
async function newCaller(): Promise<string> {
  const accountId = `acct_${randomUUID()}`;
  const apiKeyId = `key_${randomUUID()}`;
  const key = `sk-floor-${randomBytes(24).toString('base64url')}`;
  await storage.db
    .insert(accounts)
    .values({ id: accountId, email: `${accountId}@example.com`, balanceNanos: 1_000_000_000_000_000n });
  await storage.db.insert(apiKeys).values({
    id: apiKeyId,
    accountId,
    name: 'floor',
    displayPrefix: key.slice(0, 12),
    lookupHash: lookupHash(key),
    sealedKey: 'not-sealed',
  });
  callers.set(lookupHash(key), { accountId, apiKeyId });
  return key;
}

/** Credit leased per key in memory: admission takes from it, and an extension asks the ledger for more. */
const leaseSize = 1_000_000_000n;
interface Lease {
  leaseId: string;
  freeNanos: bigint;
  /** The extension under way, if any: one at a time per lease, as our gateway's leases ask. */
  extending?: Promise<boolean>;
}
const leases = new Map<string, Lease>();

async function extend(caller: Caller, lease: Lease, minNanos: bigint): Promise<boolean> {
  const grant = await ledger.extendLease({
    leaseId: lease.leaseId,
    accountId: caller.accountId,
    apiKeyId: caller.apiKeyId,
    minNanos,
    wantNanos: leaseSize,
    instanceId,
    now: new Date(),
  });
  lease.freeNanos += grant.grantedNanos;
  return grant.outcome === 'ok';
}

async function admit(caller: Caller, holdNanos: bigint): Promise<string | undefined> {
  let lease = leases.get(caller.apiKeyId);
  if (!lease) {
    lease = { leaseId: `lease_${randomUUID()}`, freeNanos: 0n };
    leases.set(caller.apiKeyId, lease);
  }
  while (lease.freeNanos < holdNanos) {
    const extending = lease.extending ?? extend(caller, lease, holdNanos);
    lease.extending = extending;
    const granted = await extending;
    if (lease.extending === extending) delete lease.extending;
    if (!granted) return undefined;
  }
  lease.freeNanos -= holdNanos;
  return lease.leaseId;
}

interface Usage {
  inputTokens: number;
  outputTokens: number;
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function usageOf(answer: unknown): Usage {
  const usage = isObject(answer) && isObject(answer.usage) ? answer.usage : {};
  const count = (value: unknown) => (typeof value === 'number' ? value : 0);
  return { inputTokens: count(usage.prompt_tokens), outputTokens: count(usage.completion_tokens) };
}

/** A request admitted: whose it is, the lease its hold was taken from, and when it began. */
interface Admitted {
  caller: Caller;
  leaseId: string;
  holdNanos: bigint;
  started: number;
}

/** The usage record and the charge, out of the lease, in the background: no answer waits for its settlement. */
function settle(
  { caller, leaseId, holdNanos, started }: Admitted,
  request: Record<string, unknown>,
  usage: Usage,
): void {
  const costNanos = BigInt(usage.inputTokens) * nanosPerInputToken + BigInt(usage.outputTokens) * nanosPerOutputToken;
  void ledger
    .settleFromLease({
      holdId: leaseId,
      claimNanos: costNanos,
      costNanos,
      now: new Date(),
      generation: {
        generationId: `gen_${randomUUID()}`,
        accountId: caller.accountId,
        apiKeyId: caller.apiKeyId,
        model: String(request.model),
        modality: 'text',
        status: 'succeeded',
        request: { surface: 'alpha', model: request.model, stream: request.stream === true },
        usage,
        durationMs: Date.now() - started,
        route: { providerId: 'upstream', upstreamModel: String(request.model), fallbacks: [] },
      },
    })
    .then((settled) => {
      // What the hold kept and the charge did not take is free again once the ledger has the charge.
      const lease = leases.get(caller.apiKeyId);
      if (lease) lease.freeNanos += holdNanos - settled.chargedNanos;
    });
}

const usageMarker = Buffer.from('"usage"');

/** A stream relayed chunk by chunk as it arrives; the `data:` event holding `"usage"` is parsed for it. */
async function relayStream(body: AsyncIterable<Buffer>, response: ServerResponse): Promise<Usage> {
  let usage: Usage = { inputTokens: 0, outputTokens: 0 };
  for await (const chunk of body) {
    response.write(chunk);
    let at = chunk.indexOf(usageMarker);
    while (at >= 0) {
      const start = chunk.lastIndexOf('data:', at) + 5;
      const end = chunk.indexOf('\n', at);
      const event = chunk.toString('utf8', start, end < 0 ? chunk.length : end);
      // The bench's upstream writes each event whole in one chunk; an event split across chunks is not read.
      try {
        usage = usageOf(JSON.parse(event));
      } catch {}
      at = chunk.indexOf(usageMarker, end < 0 ? chunk.length : end);
    }
  }
  response.end();
  return usage;
}

async function relay(request: IncomingMessage, response: ServerResponse): Promise<void> {
  const started = Date.now();
  const presented = request.headers['x-api-key'];
  const caller = typeof presented === 'string' ? callers.get(lookupHash(presented)) : undefined;
  if (!caller) return answerError(response, 401, 'unknown key');
  const body = await readBody(request);
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return answerError(response, 400, 'the body is not JSON');
  }
  if (!isObject(parsed)) return answerError(response, 400, 'the body is not a JSON object');
  // The hold: the prompt's bytes as tokens, and the output limit asked for (or 4,096).
  const maxTokens = parsed.max_tokens ?? 4096;
  if (!Number.isSafeInteger(maxTokens) || Number(maxTokens) < 1)
    return answerError(response, 400, 'max_tokens must be a positive whole number');
  const holdNanos = BigInt(body.length) * nanosPerInputToken + BigInt(Number(maxTokens)) * nanosPerOutputToken;
  const leaseId = await admit(caller, holdNanos);
  if (!leaseId) return answerError(response, 402, 'insufficient credit');
  let usage: Usage;
  try {
    usage = await exchange(request, { parsed, body }, response);
  } catch (error) {
    // Nothing to settle: the hold goes back to the lease.
    const lease = leases.get(caller.apiKeyId);
    if (lease) lease.freeNanos += holdNanos;
    throw error;
  }
  settle({ caller, leaseId, holdNanos, started }, parsed, usage);
}

/** The upstream's answer relayed to the client, and the usage it reported. */
async function exchange(
  request: IncomingMessage,
  { parsed, body }: { parsed: Record<string, unknown>; body: Buffer },
  response: ServerResponse,
): Promise<Usage> {
  const streamed = parsed.stream === true;
  const sent = streamed ? Buffer.from(JSON.stringify({ ...parsed, stream_options: { include_usage: true } })) : body;
  const answer = await pool.request({
    path: (request.url ?? '/').replace('/api/alpha', ''),
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: request.headers.authorization ?? '' },
    body: sent,
  });
  const contentType = answer.headers['content-type'];
  if (typeof contentType === 'string') response.setHeader('content-type', contentType);
  response.writeHead(answer.statusCode);
  if (streamed) return relayStream(answer.body, response);
  const whole = await readBody(answer.body);
  const usage = usageOf(JSON.parse(whole.toString('utf8')));
  response.end(whole);
  return usage;
}

const server = createServer((request, response) => {
  relay(request, response).catch((error: unknown) =>
    answerError(response, 502, error instanceof Error ? error.message : 'upstream failed'),
  );
});
server.keepAliveTimeout = 30_000;
server.listen(0, '127.0.0.1', async () => {
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('the billed floor has no TCP address');
  const key = await newCaller();
  process.stdout.write(`${JSON.stringify({ url: `http://127.0.0.1:${address.port}`, key })}\n`);
});
process.on('SIGTERM', () => {
  server.close();
  server.closeAllConnections();
  void pool
    .close()
    .then(() => storage.close())
    .then(() => process.exit(0));
});
