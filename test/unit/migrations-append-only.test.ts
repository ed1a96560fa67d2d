import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Type } from 'typebox';
import { Value } from 'typebox/value';
import { describe, expect, it } from 'vitest';

/**
 * Drizzle's migrator runs a migration once and remembers only that it ran: a migration changed after it has run
 * somewhere leaves those databases on its first text and gives new ones the second. A change is a new migration.
 * The migrator also runs only the migrations stamped later than the last one a database has, so a migration
 * stamped earlier than its predecessor would never run on a database that has the predecessor.
 */

const folder = path.resolve(import.meta.dirname, '../../src/storage/migrations');
const Journal = Type.Object({
  entries: Type.Array(Type.Object({ idx: Type.Integer(), when: Type.Integer(), tag: Type.String() })),
});

/** Each migration that has landed, with the SHA-256 of its SQL as it landed (the hash Drizzle records). */
const landed: ReadonlyArray<readonly [string, string]> = [
  ['0000_initial', '9e047c9c05eb48dd9cdbc25c0057dd776bafe48686c95e96c828049b41e140b4'],
  ['0001_ledger_functions', 'cc5eb4ec6ad2b58ebf7413a07d8a37a7541d80c5fb6e08f7c221494bddde9096'],
  ['0002_ledger_batches', '9de7dc6b37957c057358361d415d14573824145234baa324bbf5b5b268101285'],
  ['0003_settlement_within_hold', '2aa2eeaa9a0cf58060380f8bfc35611d451dd4d36155e88beaf1bce785c31473'],
  ['0004_credit_leases', 'c0463ed273b57321cb3b9f95d4fb12259a7753439bad989db2193c6eb982045c'],
  ['0005_media_jobs', 'e38e50bf313f7874a7c09b315108430f51fc45a6ab4ee5c4f27d42092faa66f8'],
  ['0006_settle_delivered', 'e2178a0e62306bafec134bce2450d42f3247d2f278a9d187de309849b2df7742'],
  ['0007_generation_routes', 'a86b8bdeec5e9a83cecef4ccadabad61e91aca8db7837c0f3d8aabacf3c3fd0d'],
  ['0008_rate_limits', 'e89b92c6a9fb360570e9a8b87081b66c0a69d372018e96efd4cb17f151333ccc'],
  ['0009_settlement_floors', 'e5d5a3657f930bf3549f3a8a28ec7e6c28db0ddebb247731987ddb317900d495'],
  ['0010_job_claims', 'e825c1e7b923a9f89fa41608670e100dd61ddf26caa60ad72f9824e4d363517b'],
  ['0011_job_fallbacks', 'ea659f4660e381850e9f2ce59b279afacc8e49a03b69e56dbc88ba24b177fad0'],
  ['0012_audit_log', '8a87daa564a02ff5be4fb4f2d4e088d1062217bbde2e2d0720530c54d683924a'],
  ['0013_runtime_catalog', '73b4ff4363432226f8a19889c6860af646734e671d96bd86906c8716488b6d4d'],
  ['0014_provider_keys', '6db1356cd2217523eef8d2bf4fb570e4de49434f9fecd7c089558072c4f18f10'],
  ['0015_webhooks', 'c53b81dcc0cfb5924c71c8f2dc544a046ae2a37ad7203d3b6d2cf5daad9f99ff'],
  ['0016_operator_role', 'd7265362a489da29ba833462dfd0ef49f7c2b4f4cfc55c3b1b185515477c2fd5'],
  ['0017_job_routing_strategy', 'e34233f4ef97244175255d952f99c3964b1e1cf555c3df9af3d6654fd354b4ed'],
  ['0018_settlement_rows_once', 'ba7da3df23f72132446cc5cbe4bd1a2b837d6b0da15ab4560556c049e04e2ae2'],
  ['0019_settle_batch_forgets_deleted_lease', '5faa068964d355dce449cf337cc00c9a67281a44d924095cc7d9b8e1d7854451'],
  ['0020_secret_verifier', '6d0c551a3e44ecb0ff904afacb7daf661a7a16dd30287fe2fea2f92a42718ff6'],
  ['0021_job_upstream_error', 'cdd1b6807547236d15a435c985a4c55bf7f4b85002342041e612dcbcb7027993'],
  ['0022_job_upstream_retry_after', '4d37c53f1f802ec90be5a084f62f3d45c3cdcedf540fe27e2276be1a4592d2ec'],
  ['0023_lowered_cap_alerts', 'd145d7f0891805a28d1e7df7ff01537a572099e7044610470053280f42eceee6'],
  ['0024_settle_lease_share', '69d1e623b31d4b7a7e0c24b988dea3de28a4dc44168e823dcc27b934c49a7e0a'],
  ['0025_webhook_fair_claims', '7a0a9486f49d26f0c36117fb44ce2ddaf23f0a709618f0043428d58778cf194f'],
];

const journal = Value.Parse(Journal, JSON.parse(readFileSync(path.join(folder, 'meta/_journal.json'), 'utf8')));
const sha256Of = (tag: string) =>
  createHash('sha256')
    .update(readFileSync(path.join(folder, `${tag}.sql`)))
    .digest('hex');

describe('the migrations', () => {
  it('keep every landed migration as it landed (a change is a new migration, whose hash joins this list)', () => {
    expect(journal.entries.map((entry) => [entry.tag, sha256Of(entry.tag)])).toEqual(landed);
  });

  it('are numbered in order and stamped later than the one before, as the migrator needs to run each', () => {
    journal.entries.forEach((entry, index) => {
      expect(entry.idx).toBe(index);
      if (index > 0) expect(entry.when, entry.tag).toBeGreaterThan(journal.entries[index - 1]!.when);
    });
  });
});
