import { describe, expect, it } from 'vitest';
import { maxRetryAfterMs, retryAfterMs } from '../../src/providers/shared/upstream-http.ts';

const now = Date.parse('2026-11-25T12:00:00Z');

describe("an upstream's retry-after, however it is written", () => {
  it('reads retry-after-ms first, then retry-after in seconds or as an HTTP date', () => {
    expect(retryAfterMs({ 'retry-after-ms': '1500', 'retry-after': '9' }, now)).toBe(1500);
    expect(retryAfterMs({ 'retry-after-ms': '0.2' }, now)).toBe(1);
    expect(retryAfterMs({ 'retry-after': '2' }, now)).toBe(2000);
    expect(retryAfterMs({ 'retry-after': ' 1.5 ' }, now)).toBe(1500);
    expect(retryAfterMs({ 'retry-after': 'Wed, 25 Nov 2026 12:00:30 GMT' }, now)).toBe(30_000);
    expect(retryAfterMs({ 'retry-after': ['3', '7'] }, now)).toBe(3000);
  });

  it('takes a date in the past as no wait, and what says no wait as none', () => {
    expect(retryAfterMs({ 'retry-after': 'Tue, 24 Nov 2026 12:00:00 GMT' }, now)).toBe(0);
    expect(retryAfterMs({}, now)).toBeUndefined();
    for (const nonsense of ['', '   ', '-5', 'NaN', 'Infinity', '1e300', '0x10', 'soon', '5 s']) {
      expect(retryAfterMs({ 'retry-after': nonsense }, now), nonsense).toBeUndefined();
    }
  });

  it('falls back to retry-after when retry-after-ms is empty or not a number', () => {
    for (const nonsense of ['', ' ', '-1', 'NaN', '1e300', 'Infinity']) {
      expect(retryAfterMs({ 'retry-after-ms': nonsense, 'retry-after': '4' }, now), nonsense).toBe(4000);
      expect(retryAfterMs({ 'retry-after-ms': nonsense }, now), nonsense).toBeUndefined();
    }
  });

  it('never takes a wait longer than a day, whatever the upstream asks', () => {
    expect(retryAfterMs({ 'retry-after': '31536000000' }, now)).toBe(maxRetryAfterMs);
    expect(retryAfterMs({ 'retry-after': '9'.repeat(400) }, now)).toBe(maxRetryAfterMs);
    expect(retryAfterMs({ 'retry-after-ms': '99999999999999' }, now)).toBe(maxRetryAfterMs);
    expect(retryAfterMs({ 'retry-after': 'Fri, 31 Dec 9999 23:59:59 GMT' }, now)).toBe(maxRetryAfterMs);
  });
});
