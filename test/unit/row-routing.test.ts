import { describe, expect, it } from 'vitest';
import { Catalog, type CatalogModel } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { orderRows, RowLatencies, type RowRouting } from '../../src/gateway/row-routing.ts';
import { servingRows } from '../../src/gateway/serving-rows.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';

/** A seeded generator (mulberry32): the same draws on every run. */
function seeded(seed: number): () => number {
  let state = seed;
  return () => {
    state = (state + 0x6d2b79f5) | 0;
    let value = Math.imul(state ^ (state >>> 15), 1 | state);
    value = (value + Math.imul(value ^ (value >>> 7), 61 | value)) ^ value;
    return ((value ^ (value >>> 14)) >>> 0) / 4294967296;
  };
}

/** A model served by three sandbox providers a, b, c (priority in that order), with the rows' extra fields. */
function modelWith(routing: string, rows: [string, string, string]): { model: CatalogModel; catalog: Catalog } {
  const config = parseConfig(
    [
      'providers:',
      '  a: { protocol: sandbox }',
      '  b: { protocol: sandbox }',
      '  c: { protocol: sandbox }',
      'models:',
      '  - id: m',
      '    pricing: { inputPerMTok: 1, outputPerMTok: 1 }',
      `    routing: ${routing}`,
      '    providers:',
      `      - { provider: a, model: echo, priority: 1${rows[0]} }`,
      `      - { provider: b, model: echo, priority: 2${rows[1]} }`,
      `      - { provider: c, model: echo, priority: 3${rows[2]} }`,
      '',
    ].join('\n'),
    'test.yaml',
    {},
  );
  const catalog = new Catalog(config);
  return { model: catalog.resolve('m'), catalog };
}

const { providers } = parseConfig(
  'providers:\n  a: { protocol: sandbox }\n  b: { protocol: sandbox }\n  c: { protocol: sandbox }\nmodels: []\n',
  'test.yaml',
  {},
);
const sources = (routing: RowRouting) => ({
  adapters: new Map([[sandboxAdapter.protocol, sandboxAdapter]]),
  providers,
  routing,
});
const order = (rows: ReadonlyArray<{ providerId: string }>) => rows.map((row) => row.providerId).join('');

describe('routing strategies', () => {
  it('priority keeps the rows as configured, whatever their weight, cost or latency', () => {
    const { model } = modelWith('priority', [', weight: 0, cost: { inputPerMTok: 9 }', ', weight: 100', '']);
    const latencies = new RowLatencies();
    latencies.record({ providerId: 'a', upstreamModel: 'echo' }, 900);
    for (let draw = 0; draw < 20; draw += 1)
      expect(order(servingRows(sources({ latencies, random: Math.random }), model, 'text'))).toBe('abc');
  });

  it('weighted draws the first row by weight and keeps the others in priority order as fallbacks', () => {
    const { model } = modelWith('weighted', [', weight: 1', ', weight: 3', ', weight: 0']);
    const routing = { latencies: new RowLatencies(), random: seeded(7) };
    const firsts = { a: 0, b: 0, c: 0 };
    for (let draw = 0; draw < 4000; draw += 1) {
      const rows = servingRows(sources(routing), model, 'text');
      const first = rows[0]!.providerId as keyof typeof firsts;
      firsts[first] += 1;
      // The rows not drawn follow in their priority order.
      expect(order(rows.slice(1))).toBe(['abc'].join('').replace(first, ''));
    }
    expect(firsts.c).toBe(0);
    // Expected 1000 and 3000: bounds wide enough for any seed.
    expect(firsts.a).toBeGreaterThan(800);
    expect(firsts.a).toBeLessThan(1200);
    expect(firsts.b).toBeGreaterThan(2800);
  });

  it('weighted draws with the given randomness: the point past a row’s share goes to the next', () => {
    const { model } = modelWith('weighted', [', weight: 1', ', weight: 1', ', weight: 2']);
    const at = (point: number) =>
      order(servingRows(sources({ latencies: new RowLatencies(), random: () => point }), model, 'text'));
    expect(at(0.1)).toBe('abc');
    expect(at(0.3)).toBe('bac');
    expect(at(0.6)).toBe('cab');
  });

  it('latency puts rows without samples first, then the lowest moving p50 of first byte', () => {
    const { model } = modelWith('latency', ['', '', '']);
    const latencies = new RowLatencies();
    const routing = { latencies, random: Math.random };
    for (const ms of [300, 310, 5, 320]) latencies.record({ providerId: 'a', upstreamModel: 'echo' }, ms);
    for (const ms of [100, 90, 2000, 110]) latencies.record({ providerId: 'c', upstreamModel: 'echo' }, ms);
    // b has no sample yet: it is tried; then c (p50 105) before a (p50 305), one outlier each notwithstanding.
    expect(order(servingRows(sources(routing), model, 'text'))).toBe('bca');
    for (const ms of [400, 400, 400]) latencies.record({ providerId: 'b', upstreamModel: 'echo' }, ms);
    expect(order(servingRows(sources(routing), model, 'text'))).toBe('cab');
  });

  it('the moving p50 follows the latest samples only', () => {
    const latencies = new RowLatencies();
    const row = { providerId: 'a', upstreamModel: 'echo' };
    expect(latencies.p50(row)).toBeUndefined();
    for (let sample = 0; sample < 100; sample += 1) latencies.record(row, 1000);
    for (let sample = 0; sample < 32; sample += 1) latencies.record(row, 50);
    expect(latencies.p50(row)).toBe(50);
    latencies.record(row, 1000);
    expect(latencies.p50(row)).toBe(50);
  });

  it('price puts the row that costs the operator least first, and rows without a cost last', () => {
    const { model } = modelWith('price', [
      '',
      ', cost: { inputPerMTok: 2, outputPerMTok: 8 }',
      ', cost: { inputPerMTok: 1, outputPerMTok: 4 }',
    ]);
    expect(order(servingRows(sources({ latencies: new RowLatencies(), random: Math.random }), model, 'text'))).toBe(
      'cba',
    );
  });

  it('orders in place and leaves a single row alone', () => {
    const { model } = modelWith('weighted', ['', '', '']);
    const rows = [...servingRows(sources({ latencies: new RowLatencies(), random: () => 0 }), model, 'text')].slice(
      0,
      1,
    );
    orderRows(rows, 'weighted', { latencies: new RowLatencies(), random: () => 0.99 });
    expect(order(rows)).toBe('a');
  });
});
