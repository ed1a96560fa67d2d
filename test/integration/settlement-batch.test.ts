/**
 * A settlement batch applies its items to copies of the rows they name and writes each row once
 * (gw_settle_batch): for sampled batches over two accounts, three keys and no key, leases and hold rows of
 * their own, claims past what is held, spend windows rolling over inside the batch, and alerts on, one batch
 * must leave exactly what the same items leave settled one statement each: balances, held sums, spend per
 * window, leases, usage records, the answers, the cap-alert marks and the webhook events queued.
 */
import fc from 'fast-check';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openStorage, type Storage } from '../../src/storage/database.ts';
import { createTestDatabase, type TestDatabase } from '../support/test-database.ts';

const usd = 10n ** 9n;
const pairs = [
  { account: 'a1', key: 'k1' },
  { account: 'a1', key: 'k2' },
  { account: 'a2', key: 'k3' },
  { account: 'a2', key: null },
] as const;
const keyAccounts = { k1: 'a1', k2: 'a1', k3: 'a2' } as const;
// The day, the month and the week roll over between these.
const moments = ['2026-03-31T23:59:59.990Z', '2026-04-01T00:00:00.010Z', '2026-04-06T00:00:00.010Z'] as const;
const nanos = (max: bigint) => fc.bigInt({ min: 0n, max });

const universe = fc.record({
  balances: fc.tuple(nanos(2n * usd), nanos(2n * usd)),
  balanceAlerts: fc.tuple(fc.option(nanos(2n * usd)), fc.option(nanos(2n * usd))),
  leases: fc.tuple(nanos(usd), nanos(usd), nanos(usd), nanos(usd)),
  // Per key: its caps (daily, weekly, monthly, total; null: none) and what it spent in the current windows.
  keys: fc.array(
    fc.record({
      caps: fc.array(fc.option(nanos(3n * usd)), { minLength: 4, maxLength: 4 }),
      spent: nanos(usd),
      // A key that never spent has no window started.
      started: fc.boolean(),
    }),
    { minLength: 3, maxLength: 3 },
  ),
});
const item = fc.record({
  pair: fc.nat({ max: pairs.length - 1 }),
  lease: fc.boolean(),
  // A settlement out of a hold row of its own names that row, or (a lost race, a repeated settlement) the
  // pair's lease or a row that is not there.
  ownHold: fc.constantFrom('own', 'lease', 'missing'),
  hold: nanos(usd / 2n),
  claim: nanos(usd / 2n),
  // Out of a lease: what it takes of the lease's row when less than the claim (a claim past its request's credit).
  share: fc.option(nanos(usd / 2n), { nil: undefined }),
  cost: nanos(usd / 2n),
  moment: fc.nat({ max: moments.length - 1 }),
  usage: fc.constantFrom(null, { usdCost: 0.5 }, { inputTokens: 3 }),
});

type Sampled<A> = A extends fc.Arbitrary<infer T> ? T : never;
type Universe = Sampled<typeof universe>;
type Item = Sampled<typeof item>;

describe('gw_settle_batch: one batch leaves what its items leave one by one', () => {
  let database: TestDatabase;
  let storage: Storage;
  let client: pg.Client;
  let run = 0;

  beforeAll(async () => {
    database = await createTestDatabase();
    storage = await openStorage(database.options);
    client = new pg.Client({ connectionString: database.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await storage?.close();
    await database?.drop();
  });

  /** The rows of one copy of the universe, `prefix` naming its ids. */
  async function create(prefix: string, sample: Universe, holds: Array<Item>) {
    const id = (name: string) => `${prefix}${name}`;
    for (const [index, account] of (['a1', 'a2'] as const).entries()) {
      await client.query(
        'INSERT INTO accounts (id, email, balance_nanos, balance_alert_nanos) VALUES ($1, $2, $3, $4)',
        [id(account), `${id(account)}@example.com`, sample.balances[index], sample.balanceAlerts[index]],
      );
      await client.query(
        `INSERT INTO webhook_endpoints (id, account_id, url, event_types, sealed_secret)
         VALUES ($1, $2, 'https://hooks.example.com/', ARRAY['balance.low', 'api_key.cap_reached'], 'sealed')`,
        [id(`we_${account}`), id(account)],
      );
    }
    for (const [index, key] of (['k1', 'k2', 'k3'] as const).entries()) {
      const { caps, spent, started } = sample.keys[index]!;
      await client.query(
        `INSERT INTO api_keys (id, account_id, name, display_prefix, lookup_hash, sealed_key,
                               daily_limit_nanos, weekly_limit_nanos, monthly_limit_nanos, total_limit_nanos,
                               spent_total_nanos, spent_day_nanos, spent_week_nanos, spent_month_nanos,
                               day_start, week_start, month_start)
         VALUES ($1, $2, 'batch', 'batch', $1, 'sealed', $3, $4, $5, $6, $7, $7, $7, $7,
                 $8::date, $8::date - 1, $8::date - 30)`,
        [id(key), id(keyAccounts[key]), ...caps, started ? spent : 0n, started ? '2026-03-31' : null],
      );
    }
    const held = new Map<string, bigint>();
    const addHold = async (holdId: string, pair: (typeof pairs)[number], amount: bigint) => {
      await client.query(
        `INSERT INTO holds (id, account_id, api_key_id, amount_nanos, instance_id) VALUES ($1, $2, $3, $4, 'batch-test')`,
        [id(holdId), id(pair.account), pair.key === null ? null : id(pair.key), amount],
      );
      for (const row of [pair.account, pair.key]) if (row !== null) held.set(row, (held.get(row) ?? 0n) + amount);
    };
    for (const [index, pair] of pairs.entries()) await addHold(`lease_${index}`, pair, sample.leases[index]!);
    for (const [index, hold] of holds.entries())
      if (!hold.lease && hold.ownHold === 'own') await addHold(`hold_${index}`, pairs[hold.pair]!, hold.hold);
    for (const [row, amount] of held)
      await client.query(`UPDATE ${row.startsWith('a') ? 'accounts' : 'api_keys'} SET held_nanos = $2 WHERE id = $1`, [
        id(row),
        amount,
      ]);
  }

  const settlementItems = (prefix: string, items: Array<Item>) =>
    items.map((entry, index) => {
      const pair = pairs[entry.pair]!;
      return {
        lease: entry.lease,
        hold: `${prefix}${entry.lease || entry.ownHold === 'lease' ? `lease_${entry.pair}` : `hold_${index}`}`,
        account: `${prefix}${pair.account}`,
        key: pair.key === null ? null : `${prefix}${pair.key}`,
        claim: String(entry.claim),
        ...(entry.share === undefined ? {} : { share: String(entry.share < entry.claim ? entry.share : entry.claim) }),
        cost: String(entry.cost),
        now: moments[entry.moment],
        generation: `${prefix}gen_${index}`,
        modality: 'text',
        model: 'batch',
        status: 'succeeded',
        request: null,
        usage: entry.usage,
        durationMs: 1,
        route: null,
        priceVersion: null,
      };
    });

  /** Everything a settlement writes, with the copy's prefix taken off the ids. */
  async function outcome(prefix: string) {
    const rows = async (text: string) =>
      JSON.parse(
        JSON.stringify((await client.query(text, [`${prefix}%`, prefix.length + 1])).rows).replaceAll(prefix, ''),
      );
    return {
      accounts: await rows(
        'SELECT substr(id, $2) AS id, balance_nanos, held_nanos FROM accounts WHERE id LIKE $1 ORDER BY id',
      ),
      keys: await rows(
        `SELECT substr(id, $2) AS id, held_nanos, spent_total_nanos, spent_day_nanos, day_start::text,
                spent_week_nanos, week_start::text, spent_month_nanos, month_start::text
           FROM api_keys WHERE id LIKE $1 ORDER BY id`,
      ),
      holds: await rows('SELECT substr(id, $2) AS id, amount_nanos FROM holds WHERE id LIKE $1 ORDER BY id'),
      generations: await rows(
        `SELECT substr(id, $2) AS id, account_id, api_key_id, usage, usd_cost_nanos, created_at
           FROM generations WHERE id LIKE $1 ORDER BY id`,
      ),
      capAlerts: await rows(
        `SELECT substr(api_key_id, $2) AS key, cap, level, window_start
           FROM api_key_cap_alerts WHERE api_key_id LIKE $1 ORDER BY 1, 2, 3, 4`,
      ),
      // The amounts in an event are the row's when its statement wrote it; which events were queued must match.
      events: await rows(
        `SELECT substr(account_id, $2) AS account, event_type, data->>'apiKeyId' AS key, data->>'cap' AS cap,
                data->>'level' AS level, data->>'windowStart' AS window_start
           FROM webhook_deliveries WHERE account_id LIKE $1 ORDER BY 1, 2, 3, 4, 5, 6`,
      ),
    };
  }

  it('for sampled batches, rows, records, answers, alert marks and queued events are the same', async () => {
    await fc.assert(
      fc.asyncProperty(universe, fc.array(item, { minLength: 2, maxLength: 12 }), async (sample, items) => {
        run++;
        const batched = `b${run}_`;
        const alone = `o${run}_`;
        await create(batched, sample, items);
        await create(alone, sample, items);

        const {
          rows: [batch],
        } = await client.query<{ settled: unknown }>('SELECT gw_settle_batch($1::jsonb) AS settled', [
          JSON.stringify(settlementItems(batched, items)),
        ]);
        // One by one: every other item through gw_settle (a media job's settlement, a batch of one inside).
        const answers: unknown[] = [];
        for (const [index, single] of settlementItems(alone, items).entries()) {
          // gw_settle (a media job's, out of a hold row of its own) takes no share of a lease.
          if (index % 2 === 0 || 'share' in single) {
            const {
              rows: [one],
            } = await client.query<{ settled: unknown[] }>('SELECT gw_settle_batch($1::jsonb) AS settled', [
              JSON.stringify([single]),
            ]);
            answers.push(one!.settled[0]);
            continue;
          }
          const {
            rows: [one],
          } = await client.query<{ was_held: boolean; charged: string; short_usage: unknown }>(
            `SELECT was_held, charged::text AS charged, short_usage
               FROM gw_settle($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15, $16)`,
            [
              single.hold,
              single.lease,
              single.account,
              single.key,
              single.claim,
              single.cost,
              single.now,
              single.generation,
              single.modality,
              single.model,
              single.status,
              single.request,
              single.usage,
              single.durationMs,
              single.route,
              single.priceVersion,
            ],
          );
          answers.push([one!.was_held, one!.charged, one!.short_usage]);
        }

        expect(batch!.settled).toEqual(answers);
        expect(await outcome(batched)).toEqual(await outcome(alone));
      }),
      {
        numRuns: 60,
        examples: [
          // A lease charged, then settled as a hold row of its own (deleted) in the same batch: the delete must
          // see the lease as the first item left it.
          [
            {
              balances: [usd, usd],
              balanceAlerts: [null, null],
              leases: [usd / 2n, 0n, 0n, 0n],
              keys: [0, 1, 2].map(() => ({ caps: [null, null, null, null], spent: 0n, started: true })),
            },
            [
              {
                pair: 0,
                lease: true,
                ownHold: 'own',
                hold: 0n,
                claim: 1_000n,
                share: undefined,
                cost: 1_000n,
                moment: 0,
                usage: null,
              },
              {
                pair: 0,
                lease: false,
                ownHold: 'lease',
                hold: 0n,
                claim: 0n,
                share: undefined,
                cost: 0n,
                moment: 0,
                usage: null,
              },
            ],
          ],
        ],
      },
    );
  });

  it('writes each row a batch of one lease charges once', async () => {
    const prefix = 'once_';
    await create(
      prefix,
      {
        balances: [10n * usd, 10n * usd],
        balanceAlerts: [null, null],
        leases: [usd, usd, usd, usd],
        keys: [0, 1, 2].map(() => ({ caps: [null, null, null, null], spent: 0n, started: true })),
      },
      [],
    );
    const items = Array.from({ length: 10 }, () => ({
      pair: 0,
      lease: true,
      ownHold: 'own' as const,
      hold: 0n,
      claim: 1_000n,
      share: undefined,
      cost: 1_000n,
      moment: 1,
      usage: null,
    }));
    const updates = async () => {
      const { rows } = await client.query<{ updated: string }>(
        `SELECT sum(n_tup_upd)::text AS updated FROM pg_stat_xact_user_tables
          WHERE relname IN ('accounts', 'api_keys', 'holds')`,
      );
      return Number(rows[0]!.updated);
    };
    await client.query('BEGIN');
    try {
      const before = await updates();
      await client.query('SELECT gw_settle_batch($1::jsonb)', [JSON.stringify(settlementItems(prefix, items))]);
      // The lease's row, its key's and its account's: one update each, not ten.
      expect((await updates()) - before).toBe(3);
    } finally {
      await client.query('COMMIT');
    }
    expect((await outcome(prefix)).holds).toContainEqual({ id: 'lease_0', amount_nanos: String(usd - 10_000n) });
  });

  it("charges a claim past a lease's share out of the credit free beyond every hold, never the lease's other credit", async () => {
    const prefix = 'share_';
    // Account a1: 1 USD, of which 0.4 is held by lease_0 (key k1) and 0.1 by lease_1 (key k2): 0.5 free.
    await create(
      prefix,
      {
        balances: [usd, usd],
        balanceAlerts: [null, null],
        leases: [(4n * usd) / 10n, usd / 10n, 0n, 0n],
        keys: [0, 1, 2].map(() => ({ caps: [null, null, null, null], spent: 0n, started: true })),
      },
      [],
    );
    const settle = async ({ claim, share, cost }: { claim: bigint; share: bigint; cost: bigint }) => {
      const [item] = settlementItems(prefix, [
        { pair: 0, lease: true, ownHold: 'own', hold: 0n, claim, share: undefined, cost, moment: 1, usage: null },
      ]);
      const { rows } = await client.query<{ settled: Array<[boolean, string, unknown]> }>(
        'SELECT gw_settle_batch($1::jsonb) AS settled',
        [JSON.stringify([{ ...item, share: String(share), generation: `${prefix}gen_${claim}` }])],
      );
      return rows[0]!.settled[0]!;
    };
    // A claim of 2 USD taking 0.3 of lease_0: 0.3 and the 0.5 free are charged; lease_0 keeps its other 0.1.
    const [held, charged] = await settle({ claim: 2n * usd, share: (3n * usd) / 10n, cost: 2n * usd });
    expect([held, charged]).toEqual([true, String((8n * usd) / 10n)]);
    const after = await outcome(prefix);
    expect(after.accounts).toContainEqual({
      id: 'a1',
      balance_nanos: String((2n * usd) / 10n),
      held_nanos: String((2n * usd) / 10n),
    });
    expect(after.holds).toEqual(
      expect.arrayContaining([
        { id: 'lease_0', amount_nanos: String(usd / 10n) },
        { id: 'lease_1', amount_nanos: String(usd / 10n) },
      ]),
    );
    // Nothing is free beyond the two leases now: a second such claim is charged its share alone.
    const [, second] = await settle({ claim: usd, share: usd / 20n, cost: usd });
    expect(second).toBe(String(usd / 20n));
    // A share past the claim is refused.
    await expect(settle({ claim: 1n, share: 2n, cost: 1n })).rejects.toThrow('share');
  });

  it("takes what a lease's row has of a share it cannot cover, the rest out of free credit", async () => {
    const prefix = 'short_';
    // Account a1: 1 USD, of which 0.2 is held by lease_0 (key k1): 0.8 free beyond it.
    await create(
      prefix,
      {
        balances: [usd, usd],
        balanceAlerts: [null, null],
        leases: [(2n * usd) / 10n, 0n, 0n, 0n],
        keys: [0, 1, 2].map(() => ({ caps: [null, null, null, null], spent: 0n, started: true })),
      },
      [],
    );
    const settle = async (fields: { share: bigint; promised: bigint; generation: string }) => {
      const [item] = settlementItems(prefix, [
        {
          pair: 0,
          lease: true,
          ownHold: 'own',
          hold: 0n,
          claim: usd,
          share: undefined,
          cost: usd,
          moment: 1,
          usage: null,
        },
      ]);
      const { rows } = await client.query<{ settled: Array<[boolean, string, unknown]> }>(
        'SELECT gw_settle_batch($1::jsonb) AS settled',
        [
          JSON.stringify([
            {
              ...item,
              share: String(fields.share),
              promised: String(fields.promised),
              generation: `${prefix}${fields.generation}`,
            },
          ]),
        ],
      );
      return rows[0]!.settled[0]!;
    };
    // A claim of 1 USD whose share (0.3, the request's own 0.1 among it) the row's 0.2 cannot cover: the row gives
    // its 0.2 and the free credit 0.8 (it took nothing of the row, and was charged 0.8); the row held the request's
    // own credit, so the lease is held still.
    const [held, charged] = await settle({ share: (3n * usd) / 10n, promised: usd / 10n, generation: 'gen_1' });
    expect([held, charged]).toEqual([true, String(usd)]);
    const after = await outcome(prefix);
    expect(after.accounts).toContainEqual({ id: 'a1', balance_nanos: '0', held_nanos: '0' });
    expect(after.holds).toContainEqual({ id: 'lease_0', amount_nanos: '0' });
    // An empty row does not hold a request's own credit: reported not held (nothing is left to charge).
    const [emptyHeld, emptyCharged] = await settle({ share: usd / 10n, promised: usd / 10n, generation: 'gen_2' });
    expect([emptyHeld, emptyCharged]).toEqual([false, '0']);
  });
});
