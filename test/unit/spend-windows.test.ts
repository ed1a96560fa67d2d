import { describe, expect, it } from 'vitest';
import { currentSpend, secondsUntilWindowEnds, windowStartsAt } from '../../src/domain/spend-windows.ts';

describe('spend windows', () => {
  it('uses the UTC day, the ISO week starting Monday and the calendar month', () => {
    // Sunday 2026-11-22 23:30 UTC is still in the week that began Monday 2026-11-16.
    expect(windowStartsAt(new Date('2026-11-22T23:30:00Z'))).toEqual({
      day: '2026-11-22',
      week: '2026-11-16',
      month: '2026-11-01',
    });
    expect(windowStartsAt(new Date('2026-11-23T00:00:00Z'))).toEqual({
      day: '2026-11-23',
      week: '2026-11-23',
      month: '2026-11-01',
    });
    // A week crossing a year boundary starts in the old year.
    expect(windowStartsAt(new Date('2027-01-01T12:00:00Z')).week).toBe('2026-12-28');
    // Time zones of the machine do not matter: 2026-03-01T00:30+02:00 is still February in UTC.
    expect(windowStartsAt(new Date('2026-03-01T00:30:00+02:00')).month).toBe('2026-02-01');
  });

  it('says when each window ends: the next UTC midnight, Monday and first of the month', () => {
    // Sunday 2026-11-22 23:30 UTC: the day and the week both end in 30 minutes, the month on 2026-12-01.
    const sunday = new Date('2026-11-22T23:30:00Z');
    expect(secondsUntilWindowEnds('daily', sunday)).toBe(1_800);
    expect(secondsUntilWindowEnds('weekly', sunday)).toBe(1_800);
    expect(secondsUntilWindowEnds('monthly', sunday)).toBe(8 * 86_400 + 1_800);
    // Monday at midnight: a whole week ahead; a month crossing a year boundary ends on 1 January.
    expect(secondsUntilWindowEnds('weekly', new Date('2026-11-23T00:00:00Z'))).toBe(7 * 86_400);
    expect(secondsUntilWindowEnds('monthly', new Date('2026-12-31T23:59:59.500Z'))).toBe(1);
  });

  it('counts a counter from an older window as nothing spent', () => {
    const state = {
      spentTotalNanos: 900n,
      dayStart: '2026-11-21',
      spentDayNanos: 100n,
      weekStart: '2026-11-16',
      spentWeekNanos: 300n,
      monthStart: '2026-10-01',
      spentMonthNanos: 500n,
    };
    expect(currentSpend(state, new Date('2026-11-22T10:00:00Z'))).toEqual({
      daily: 0n,
      weekly: 300n,
      monthly: 0n,
      total: 900n,
    });
    expect(currentSpend({ ...state, dayStart: null }, new Date('2026-11-21T10:00:00Z')).daily).toBe(0n);
    expect(currentSpend(state, new Date('2026-11-21T10:00:00Z')).daily).toBe(100n);
  });
});
