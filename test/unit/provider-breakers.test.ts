import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { ProviderBreakers, RowUnavailable, type BreakerState } from '../../src/gateway/provider-breakers.ts';

const row = { providerId: 'primary', upstreamModel: 'gpt-4o-mini' };
const cooldownMs = 40;
const down = () => Promise.reject(new UpstreamUnreachableError('connect', 'connection refused'));
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Breakers that open after two failures, with the row's breaker opened and its cooldown over. */
async function openedRow(): Promise<{ breakers: ProviderBreakers; changes: BreakerState[] }> {
  const changes: BreakerState[] = [];
  const breakers = new ProviderBreakers({ failures: 2, cooldownMs }, (_row, state) => changes.push(state));
  for (let failure = 0; failure < 2; failure += 1) await expect(breakers.run(row, down)).rejects.toBeInstanceOf(UpstreamUnreachableError);
  await expect(breakers.run(row, () => Promise.resolve('never sent'))).rejects.toBeInstanceOf(RowUnavailable);
  await pause(cooldownMs + 10);
  return { breakers, changes };
}

const stateOf = (breakers: ProviderBreakers) => breakers.states().find((state) => state.providerId === row.providerId && state.upstreamModel === row.upstreamModel)?.state;

describe('the breaker of a provider row', () => {
  it('does not count what the gateway itself refuses while closed', async () => {
    const breakers = new ProviderBreakers({ failures: 2, cooldownMs }, () => undefined);
    for (let refusal = 0; refusal < 5; refusal += 1) {
      await expect(breakers.run(row, () => Promise.reject(new GatewayError('GW_VALIDATION', 'not sent')))).rejects.toBeInstanceOf(GatewayError);
    }
    await expect(breakers.run(row, () => Promise.resolve('served'))).resolves.toBe('served');
    expect(stateOf(breakers)).toBe('closed');
  });

  it('is closed again by a probe the upstream answers, even with a 4xx (the row is alive)', async () => {
    const { breakers, changes } = await openedRow();
    await expect(breakers.run(row, () => Promise.reject(new UpstreamHttpError(400, '{}', 'application/json')))).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(stateOf(breakers)).toBe('closed');
    expect(changes).toEqual(['open', 'half-open', 'closed']);
  });

  it('stays open after a probe that failed before the upstream answered, and hands the caller the real error', async () => {
    const { breakers, changes } = await openedRow();
    const refusal = new GatewayError('GW_VALIDATION', 'the gateway would not send this');
    await expect(breakers.run(row, () => Promise.reject(refusal))).rejects.toBe(refusal);
    expect(stateOf(breakers)).toBe('open');
    expect(changes).toEqual(['open', 'half-open', 'open']);
    // Skipped for another cooldown, then probed again.
    await expect(breakers.run(row, () => Promise.resolve('never sent'))).rejects.toBeInstanceOf(RowUnavailable);
    await pause(cooldownMs + 10);
    await expect(breakers.run(row, () => Promise.resolve('served'))).resolves.toBe('served');
    expect(stateOf(breakers)).toBe('closed');
  });

  it('sends other callers on while its one probe runs', async () => {
    const { breakers } = await openedRow();
    let answer: (value: string) => void = () => undefined;
    const probe = breakers.run(row, () => new Promise<string>((resolve) => (answer = resolve)));
    await expect(breakers.run(row, () => Promise.resolve('not while probing'))).rejects.toMatchObject({ retryInMs: 0 });
    answer('probed');
    await expect(probe).resolves.toBe('probed');
    expect(stateOf(breakers)).toBe('closed');
  });
});
