import { CircuitState } from 'cockatiel';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { AccountSpreadBreaker, ProviderBreakers, RowUnavailable } from '../../src/gateway/provider-breakers.ts';
import type { BreakerState, RowRef } from '../../src/domain/provider-rows.ts';
import { dispatchWithFallback } from '../../src/gateway/upstream-dispatch.ts';

const row = { providerId: 'primary', upstreamModel: 'gpt-4o-mini' };
const cooldownMs = 40;
const down = () => Promise.reject(new UpstreamUnreachableError('connect', 'connection refused'));
const failedWith = (status: number) => () =>
  Promise.reject(new UpstreamHttpError(status, '{}', { contentType: 'application/json' }));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
// The window is wide enough that a slow machine cannot spread these tests' failures past it.
const settings = { failures: 2, minAccounts: 2, cooldownMs, windowMs: 60_000 };

/** Breakers that open after two failures from two accounts, with the row's breaker opened and its cooldown over. */
async function openedRow(): Promise<{ breakers: ProviderBreakers; changes: BreakerState[] }> {
  const changes: BreakerState[] = [];
  const breakers = new ProviderBreakers(settings, (_row, state) => changes.push(state));
  for (const account of ['acct_a', 'acct_b'])
    await expect(breakers.run({ row, accountId: account }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
  await expect(breakers.run({ row, accountId: 'acct_c' }, () => Promise.resolve('never sent'))).rejects.toBeInstanceOf(
    RowUnavailable,
  );
  await pause(cooldownMs + 10);
  return { breakers, changes };
}

const stateOf = (breakers: ProviderBreakers) =>
  breakers.states().find((state) => state.providerId === row.providerId && state.upstreamModel === row.upstreamModel)
    ?.state;

describe('the breaker of a provider row', () => {
  it('does not count what the gateway itself refuses while closed', async () => {
    const breakers = new ProviderBreakers(settings, () => undefined);
    for (let refusal = 0; refusal < 5; refusal += 1) {
      await expect(
        breakers.run({ row, accountId: `acct_${refusal}` }, () =>
          Promise.reject(new GatewayError('GW_VALIDATION', 'not sent')),
        ),
      ).rejects.toBeInstanceOf(GatewayError);
    }
    await expect(breakers.run({ row, accountId: 'acct_a' }, () => Promise.resolve('served'))).resolves.toBe('served');
    expect(stateOf(breakers)).toBe('closed');
  });

  it('keeps its state through a reload with the same settings, and starts closed under changed ones', async () => {
    const breakers = new ProviderBreakers(settings, () => undefined);
    for (const account of ['acct_a', 'acct_b'])
      await expect(breakers.run({ row, accountId: account }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    breakers.reconfigure({ ...settings });
    await expect(breakers.run({ row, accountId: 'acct_c' }, () => Promise.resolve('skipped'))).rejects.toBeInstanceOf(
      RowUnavailable,
    );
    breakers.reconfigure({ ...settings, failures: 3 });
    await expect(breakers.run({ row, accountId: 'acct_c' }, () => Promise.resolve('served'))).resolves.toBe('served');
    expect(stateOf(breakers)).toBe('closed');
  });

  it('is closed again by a probe the upstream answers, even with a 4xx (the row is alive)', async () => {
    const { breakers, changes } = await openedRow();
    await expect(breakers.run({ row, accountId: 'acct_a' }, failedWith(400))).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(stateOf(breakers)).toBe('closed');
    expect(changes).toEqual(['open', 'half-open', 'closed']);
  });

  it('stays open after a probe that failed before the upstream answered, and hands the caller the real error', async () => {
    const { breakers, changes } = await openedRow();
    const refusal = new GatewayError('GW_VALIDATION', 'the gateway would not send this');
    await expect(breakers.run({ row, accountId: 'acct_a' }, () => Promise.reject(refusal))).rejects.toBe(refusal);
    expect(stateOf(breakers)).toBe('open');
    expect(changes).toEqual(['open', 'half-open', 'open']);
    // Skipped for another cooldown, then probed again.
    await expect(
      breakers.run({ row, accountId: 'acct_a' }, () => Promise.resolve('never sent')),
    ).rejects.toBeInstanceOf(RowUnavailable);
    await pause(cooldownMs + 10);
    await expect(breakers.run({ row, accountId: 'acct_a' }, () => Promise.resolve('served'))).resolves.toBe('served');
    expect(stateOf(breakers)).toBe('closed');
  });

  it('sends other callers on while its one probe runs', async () => {
    const { breakers } = await openedRow();
    let answer: (value: string) => void = () => undefined;
    const probe = breakers.run(
      { row, accountId: 'acct_a' },
      () => new Promise<string>((resolve) => (answer = resolve)),
    );
    expect(breakers.available(row)).toBe(false);
    await expect(
      breakers.run({ row, accountId: 'acct_b' }, () => Promise.resolve('not while probing')),
    ).rejects.toMatchObject({
      retryInMs: 0,
    });
    answer('probed');
    await expect(probe).resolves.toBe('probed');
    expect(stateOf(breakers)).toBe('closed');
  });
});

describe('which failures open a row, and when an open row is still called', () => {
  it("stays closed under one account's failures, however many, and its 500s and 429s alike", async () => {
    const breakers = new ProviderBreakers({ failures: 3, minAccounts: 3, cooldownMs: 60_000 }, () => undefined);
    for (let failure = 0; failure < 50; failure += 1) {
      await expect(
        breakers.run({ row, accountId: 'acct_poison' }, failedWith(failure % 2 === 0 ? 500 : 429)),
      ).rejects.toBeInstanceOf(UpstreamHttpError);
    }
    await expect(breakers.run({ row, accountId: 'acct_poison' }, down)).rejects.toBeInstanceOf(
      UpstreamUnreachableError,
    );
    expect(stateOf(breakers)).toBe('closed');
    await expect(breakers.run({ row, accountId: 'acct_other' }, () => Promise.resolve('served'))).resolves.toBe(
      'served',
    );
  });

  it('opens once the failures in a row come from enough accounts, and only then', async () => {
    const breakers = new ProviderBreakers({ failures: 3, minAccounts: 3, cooldownMs: 60_000 }, () => undefined);
    await expect(breakers.run({ row, accountId: 'acct_a' }, failedWith(503))).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(breakers.run({ row, accountId: 'acct_b' }, failedWith(503))).rejects.toBeInstanceOf(UpstreamHttpError);
    // Two accounts: however many more failures they bring, the row stays closed.
    for (let failure = 0; failure < 10; failure += 1)
      await expect(breakers.run({ row, accountId: 'acct_b' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    expect(stateOf(breakers)).toBe('closed');
    await expect(breakers.run({ row, accountId: 'acct_c' }, failedWith(502))).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(stateOf(breakers)).toBe('open');
    await expect(
      breakers.run({ row, accountId: 'acct_d' }, () => Promise.resolve('never sent')),
    ).rejects.toBeInstanceOf(RowUnavailable);
  });

  it("does not lose the other accounts' failures under one account's flood", async () => {
    const breakers = new ProviderBreakers({ failures: 3, minAccounts: 4, cooldownMs: 60_000 }, () => undefined);
    await expect(breakers.run({ row, accountId: 'acct_a' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    await expect(breakers.run({ row, accountId: 'acct_b' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    for (let failure = 0; failure < 100; failure += 1)
      await expect(breakers.run({ row, accountId: 'acct_flood' }, down)).rejects.toBeInstanceOf(
        UpstreamUnreachableError,
      );
    // Three accounts so far: acct_a and acct_b are still counted after the flood's hundred failures.
    expect(stateOf(breakers)).toBe('closed');
    await expect(breakers.run({ row, accountId: 'acct_c' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    expect(stateOf(breakers)).toBe('open');
  });

  it("counts neither the upstream's 4xx nor failures before a success", async () => {
    const breakers = new ProviderBreakers({ failures: 3, minAccounts: 3, cooldownMs: 60_000 }, () => undefined);
    await expect(breakers.run({ row, accountId: 'acct_a' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    await expect(breakers.run({ row, accountId: 'acct_b' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    await expect(breakers.run({ row, accountId: 'acct_c' }, failedWith(400))).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(breakers.run({ row, accountId: 'acct_d' }, failedWith(404))).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(stateOf(breakers)).toBe('closed');
    // A success between failures: they are not in a row.
    await expect(breakers.run({ row, accountId: 'acct_e' }, () => Promise.resolve('served'))).resolves.toBe('served');
    await expect(breakers.run({ row, accountId: 'acct_f' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    await expect(breakers.run({ row, accountId: 'acct_g' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    expect(stateOf(breakers)).toBe('closed');
    await expect(breakers.run({ row, accountId: 'acct_h' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    expect(stateOf(breakers)).toBe('open');
  });

  it('calls an open row when the caller has no other row to send to, leaving its state to the probe', async () => {
    const { breakers, changes } = await openedRow();
    // Still within the cooldown after another failed probe.
    await expect(breakers.run({ row, accountId: 'acct_a' }, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
    expect(stateOf(breakers)).toBe('open');
    expect(breakers.available(row)).toBe(false);
    await expect(breakers.run({ row, accountId: 'acct_a', maySkip: false }, failedWith(500))).rejects.toMatchObject({
      status: 500,
    });
    await expect(
      breakers.run({ row, accountId: 'acct_b', maySkip: false }, () => Promise.resolve('sent regardless')),
    ).resolves.toBe('sent regardless');
    expect(stateOf(breakers)).toBe('open');
    expect(changes).toEqual(['open', 'half-open', 'open']);
    // While its one probe runs, too.
    await pause(cooldownMs + 10);
    expect(breakers.available(row)).toBe(true);
    let answer: (value: string) => void = () => undefined;
    const probe = breakers.run(
      { row, accountId: 'acct_a' },
      () => new Promise<string>((resolve) => (answer = resolve)),
    );
    await expect(
      breakers.run({ row, accountId: 'acct_b', maySkip: false }, () => Promise.resolve('sent beside the probe')),
    ).resolves.toBe('sent beside the probe');
    answer('probed');
    await expect(probe).resolves.toBe('probed');
    expect(stateOf(breakers)).toBe('closed');
  });
});

describe('the rule of a row breaker (failures, accounts, window)', () => {
  const rule = (clock: { now: number }) =>
    new AccountSpreadBreaker({ failures: 3, minAccounts: 2, windowMs: 1_000 }, () => clock.now);

  it('opens on enough failures from enough accounts within the window', () => {
    const clock = { now: 10_000 };
    const breaker = rule(clock);
    breaker.record('acct_a');
    expect(breaker.failure(CircuitState.Closed)).toBe(false);
    breaker.record('acct_a');
    expect(breaker.failure(CircuitState.Closed)).toBe(false);
    clock.now += 900;
    breaker.record('acct_b');
    expect(breaker.failure(CircuitState.Closed)).toBe(true);
  });

  it('does not open on failures spread wider than the window', () => {
    const clock = { now: 10_000 };
    const breaker = rule(clock);
    breaker.record('acct_a');
    clock.now += 600;
    breaker.record('acct_b');
    clock.now += 600;
    // Three failures from two accounts, but the first is 1.2 s old.
    breaker.record('acct_b');
    expect(breaker.failure(CircuitState.Closed)).toBe(false);
    // The accounts must fall in the window as well as the count: acct_a's one failure is too old.
    breaker.record('acct_b');
    expect(breaker.failure(CircuitState.Closed)).toBe(false);
    breaker.record('acct_c');
    expect(breaker.failure(CircuitState.Closed)).toBe(true);
  });

  it('starts over after a success, and reopens on any failed probe', () => {
    const clock = { now: 10_000 };
    const breaker = rule(clock);
    breaker.record('acct_a');
    breaker.record('acct_b');
    breaker.success();
    breaker.record('acct_c');
    expect(breaker.failure(CircuitState.Closed)).toBe(false);
    expect(breaker.failure(CircuitState.HalfOpen)).toBe(true);
  });
});

describe('a dispatch over rows with open breakers', () => {
  const first = { providerId: 'first', upstreamModel: 'm' };
  const second = { providerId: 'second', upstreamModel: 'm' };

  /** Breakers with the rows named open (three failures from three accounts each), for a long cooldown. */
  async function breakersWithOpen(...rows: RowRef[]): Promise<ProviderBreakers> {
    const breakers = new ProviderBreakers({ failures: 3, minAccounts: 3, cooldownMs: 60_000 }, () => undefined);
    for (const open of rows)
      for (const account of ['acct_a', 'acct_b', 'acct_c'])
        await expect(breakers.run({ row: open, accountId: account }, down)).rejects.toBeInstanceOf(
          UpstreamUnreachableError,
        );
    return breakers;
  }

  /** Dispatches over `rows`, each answering as `answers` says; the rows called, in order, and the outcome. */
  async function dispatch(breakers: ProviderBreakers, rows: RowRef[], answers: Record<string, () => Promise<string>>) {
    const called: string[] = [];
    const outcome = dispatchWithFallback({
      modelId: 'model',
      accountId: 'acct_victim',
      rows,
      resilience: {
        breakers,
        events: { fallback: () => undefined, retry: () => undefined },
        retryBudgetMs: 0,
        maxRetries: 0,
        traced: false,
      },
      mayContinue: () => true,
      attempt: (row) => {
        called.push(row.providerId);
        return answers[row.providerId]!();
      },
      attempts: [],
    });
    return {
      called,
      outcome: await outcome.then(
        (served) => ({ served: served.value }),
        (error: unknown) => ({ error }),
      ),
    };
  }

  it('skips an open row while a later row may serve', async () => {
    const breakers = await breakersWithOpen(first);
    const { called, outcome } = await dispatch(breakers, [first, second], {
      first: () => Promise.resolve('first'),
      second: () => Promise.resolve('second'),
    });
    expect(called).toEqual(['second']);
    expect(outcome).toEqual({ served: 'second' });
  });

  it("calls a single open row, and relays its upstream's answer", async () => {
    const breakers = await breakersWithOpen(first);
    const failed = await dispatch(breakers, [first], { first: failedWith(503) });
    expect(failed.called).toEqual(['first']);
    expect(failed.outcome).toEqual({ error: expect.objectContaining({ status: 503 }) });
    expect((await dispatch(breakers, [first], { first: () => Promise.resolve('served') })).outcome).toEqual({
      served: 'served',
    });
  });

  it('calls the best row once when every row is open, and relays its failure without trying the others', async () => {
    const breakers = await breakersWithOpen(first, second);
    const { called, outcome } = await dispatch(breakers, [first, second], {
      first: failedWith(500),
      second: () => Promise.resolve('never sent'),
    });
    expect(called).toEqual(['first']);
    expect(outcome).toEqual({ error: expect.objectContaining({ status: 500 }) });
  });

  it("relays a failed row's answer when the rows after it are open, not a 503 of the gateway's", async () => {
    const breakers = await breakersWithOpen(second);
    const { called, outcome } = await dispatch(breakers, [first, second], {
      first: failedWith(429),
      second: () => Promise.resolve('never sent'),
    });
    expect(called).toEqual(['first']);
    expect(outcome).toEqual({ error: expect.objectContaining({ status: 429 }) });
  });
});
