import { describe, expect, it } from 'vitest';
import { AttemptCounter } from '../../src/http/attempt-counter.ts';

describe('AttemptCounter', () => {
  it('refuses past the limit until the window ends, then counts afresh', () => {
    let now = 0;
    const counter = new AttemptCounter({ limit: 2, windowMs: 10_000, maxEntries: 10, now: () => now });
    counter.record('a');
    expect(counter.retryAfterSeconds('a')).toBe(0);
    counter.record('a');
    expect(counter.retryAfterSeconds('a')).toBe(10);
    now = 9_001;
    expect(counter.retryAfterSeconds('a')).toBe(1);
    now = 10_000;
    expect(counter.retryAfterSeconds('a')).toBe(0);
    counter.record('a');
    expect(counter.retryAfterSeconds('a')).toBe(0);
  });

  it('remembers at most maxEntries keys, forgetting the oldest first', () => {
    const counter = new AttemptCounter({ limit: 1, windowMs: 60_000, maxEntries: 100 });
    for (let index = 0; index < 100_000; index++) counter.record(`address-${index}`);
    expect(counter.size).toBe(100);
    expect(counter.retryAfterSeconds('address-0')).toBe(0);
    expect(counter.retryAfterSeconds('address-99999')).toBeGreaterThan(0);
    expect(counter.retryAfterSeconds('address-99900')).toBeGreaterThan(0);
    expect(counter.retryAfterSeconds('address-99899')).toBe(0);
  });

  it('forget clears one key only', () => {
    const counter = new AttemptCounter({ limit: 1, windowMs: 60_000, maxEntries: 10 });
    counter.record('a');
    counter.record('b');
    counter.forget('a');
    expect(counter.retryAfterSeconds('a')).toBe(0);
    expect(counter.retryAfterSeconds('b')).toBeGreaterThan(0);
  });
});
