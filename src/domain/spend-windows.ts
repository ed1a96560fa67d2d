/** Key spend windows: UTC calendar day, ISO week starting Monday, calendar month; `total` never resets. */
export interface WindowStarts {
  day: string;
  week: string;
  month: string;
}

const isoDate = (date: Date) => date.toISOString().slice(0, 10);

export function windowStartsAt(now: Date): WindowStarts {
  const day = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
  const daysSinceMonday = (day.getUTCDay() + 6) % 7;
  const week = new Date(day.getTime() - daysSinceMonday * 86_400_000);
  const month = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
  return { day: isoDate(day), week: isoDate(week), month: isoDate(month) };
}

export interface KeySpendState {
  spentTotalNanos: bigint;
  dayStart: string | null;
  spentDayNanos: bigint;
  weekStart: string | null;
  spentWeekNanos: bigint;
  monthStart: string | null;
  spentMonthNanos: bigint;
}

/** What the key has spent in each window that contains `now`; a counter from an older window counts as 0. */
export function currentSpend(
  state: KeySpendState,
  now: Date,
): { daily: bigint; weekly: bigint; monthly: bigint; total: bigint } {
  const starts = windowStartsAt(now);
  const inWindow = (start: string | null, current: string, spent: bigint) =>
    start !== null && start >= current ? spent : 0n;
  return {
    daily: inWindow(state.dayStart, starts.day, state.spentDayNanos),
    weekly: inWindow(state.weekStart, starts.week, state.spentWeekNanos),
    monthly: inWindow(state.monthStart, starts.month, state.spentMonthNanos),
    total: state.spentTotalNanos,
  };
}

/** Whole seconds (at least 1) from `now` until the window of that name containing it ends and its spend starts afresh. */
export function secondsUntilWindowEnds(window: 'daily' | 'weekly' | 'monthly', now: Date): number {
  const dayStart = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate());
  const daysSinceMonday = (new Date(dayStart).getUTCDay() + 6) % 7;
  const end =
    window === 'daily'
      ? dayStart + 86_400_000
      : window === 'weekly'
        ? dayStart + (7 - daysSinceMonday) * 86_400_000
        : Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1);
  return Math.max(1, Math.ceil((end - now.getTime()) / 1000));
}
