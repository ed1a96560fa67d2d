import { describe, expect, it } from 'vitest';
import { CounterFamily, HistogramFamily } from '../../src/telemetry/metric-cells.ts';

describe('counter and histogram cells in Prometheus text format', () => {
  it('prints HELP and TYPE alone before anything is recorded, so dashboards find every family', () => {
    const family = new CounterFamily({
      name: 'gateway_x_total',
      help: 'What x counts\nover two lines',
      labelNames: ['model'],
    });
    expect(family.text()).toBe('# HELP gateway_x_total What x counts\\nover two lines\n# TYPE gateway_x_total counter');
  });

  it('keeps one cell per label set, whatever object the labels come in, and escapes their values', () => {
    const family = new CounterFamily({ name: 'gateway_x_total', help: 'x', labelNames: ['model', 'status'] });
    family.cell({ model: 'a', status: '200' }).inc();
    family.cell({ status: '200', model: 'a' }).inc(2.5);
    family.cell({ model: 'say "hi"\\\n', status: '200' }).inc();
    expect(family.cell({ model: 'a', status: '200' }).value).toBe(3.5);
    expect(family.text().split('\n').slice(2)).toEqual([
      'gateway_x_total{model="a",status="200"} 3.5',
      'gateway_x_total{model="say \\"hi\\"\\\\\\n",status="200"} 1',
    ]);
  });

  it('does not mistake label sets whose values would join to the same text', () => {
    const family = new CounterFamily({ name: 'gateway_x_total', help: 'x', labelNames: ['from', 'to'] });
    family.cell({ from: 'a', to: 'bc' }).inc();
    family.cell({ from: 'ab', to: 'c' }).inc(5);
    family.cell({ from: 'a\u0000', to: 'b' }).inc(7);
    family.cell({ from: 'a', to: '\u0000b' }).inc(11);
    expect(family.cell({ from: 'a', to: 'bc' }).value).toBe(1);
    expect(family.cell({ from: 'ab', to: 'c' }).value).toBe(5);
    expect(family.cell({ from: 'a\u0000', to: 'b' }).value).toBe(7);
    expect(family.cell({ from: 'a', to: '\u0000b' }).value).toBe(11);
  });

  it('counts histogram buckets cumulatively, a value on a bound in that bound, and past the last in +Inf only', () => {
    const family = new HistogramFamily({
      name: 'gateway_t_seconds',
      help: 't',
      labelNames: ['route'],
      bounds: [0.1, 1],
    });
    const cell = family.cell({ route: '/r' });
    for (const value of [0.05, 0.1, 0.5, 1, 7]) cell.observe(value);
    expect(family.text().split('\n').slice(2)).toEqual([
      'gateway_t_seconds_bucket{route="/r",le="0.1"} 2',
      'gateway_t_seconds_bucket{route="/r",le="1"} 4',
      'gateway_t_seconds_bucket{route="/r",le="+Inf"} 5',
      'gateway_t_seconds_sum{route="/r"} 8.65',
      'gateway_t_seconds_count{route="/r"} 5',
    ]);
  });

  it('spells a total past the largest number +Inf, and ignores steps that would spoil a total for good', () => {
    const counter = new CounterFamily({ name: 'gateway_x_total', help: 'x', labelNames: ['model'] });
    const cell = counter.cell({ model: 'a' });
    cell.inc(Number.NaN);
    cell.inc(-5);
    expect(cell.value).toBe(0);
    cell.inc(1e308);
    cell.inc(1e308);
    expect(counter.text().split('\n').slice(2)).toEqual(['gateway_x_total{model="a"} +Inf']);
    const histogram = new HistogramFamily({ name: 'gateway_t_seconds', help: 't', labelNames: ['route'], bounds: [1] });
    const timed = histogram.cell({ route: '/r' });
    timed.observe(Number.NaN);
    timed.observe(0.5);
    timed.observe(Number.POSITIVE_INFINITY);
    expect(histogram.text().split('\n').slice(2)).toEqual([
      'gateway_t_seconds_bucket{route="/r",le="1"} 1',
      'gateway_t_seconds_bucket{route="/r",le="+Inf"} 2',
      'gateway_t_seconds_sum{route="/r"} +Inf',
      'gateway_t_seconds_count{route="/r"} 2',
    ]);
  });
});
