import { describe, expect, it } from 'vitest';
import { RowHealth } from '../../src/gateway/row-health.ts';

const row = { providerId: 'openai', upstreamModel: 'gpt-4o-mini' };

describe('RowHealth', () => {
  it('answers nothing for a row never sent to', () => {
    expect(new RowHealth().reading(row)).toEqual({ attempts: 0, failures: 0, errorRate: 0 });
  });

  it('gives the error rate and the nearest-rank p50 and p95 of the attempts in the window', () => {
    const health = new RowHealth(60_000, () => 1_000_000);
    for (let latency = 1; latency <= 100; latency++) health.record(row, latency, latency % 10 === 0);
    expect(health.reading(row)).toEqual({ attempts: 100, failures: 10, errorRate: 0.1, p50Ms: 50, p95Ms: 95 });
    expect(health.reading({ ...row, upstreamModel: 'other' }).attempts).toBe(0);
  });

  it('leaves out attempts older than the window', () => {
    let now = 0;
    const health = new RowHealth(60_000, () => now);
    health.record(row, 5_000, true);
    now = 61_000;
    health.record(row, 10, false);
    expect(health.reading(row)).toEqual({ attempts: 1, failures: 0, errorRate: 0, p50Ms: 10, p95Ms: 10 });
    now = 200_000;
    expect(health.reading(row).attempts).toBe(0);
  });

  it('keeps only the latest 1024 attempts of a row, whatever the rate', () => {
    const health = new RowHealth(60_000, () => 0);
    for (let index = 0; index < 5_000; index++) health.record(row, index < 4_000 ? 1_000 : 1, index < 4_000);
    expect(health.reading(row)).toMatchObject({ attempts: 1024, p50Ms: 1 });
    // 24 of the slow failures are still among the latest 1024.
    expect(health.reading(row).failures).toBe(24);
  });
});
