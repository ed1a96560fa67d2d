import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import type { GenerationAttempt } from '../../src/domain/generation-route.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { ProviderBreakers } from '../../src/gateway/provider-breakers.ts';
import { RowHealth } from '../../src/gateway/row-health.ts';
import { dispatchWithFallback, type Resilience } from '../../src/gateway/upstream-dispatch.ts';

const first = { providerId: 'a', upstreamModel: 'm' };
const second = { providerId: 'b', upstreamModel: 'm' };

function resilience(health: RowHealth): Resilience {
  return {
    breakers: new ProviderBreakers({ failures: 100, minAccounts: 1, cooldownMs: 1_000 }, () => undefined),
    events: { fallback: () => undefined, retry: () => undefined },
    retryBudgetMs: 0,
    maxRetries: 0,
    traced: false,
    health,
  };
}

describe("the dispatch's health window", () => {
  it('counts a fallback-worthy failure as failed, an upstream 4xx and a success as answered, and the gateway refusing nothing', async () => {
    const health = new RowHealth();
    const outcomes: Array<() => unknown> = [
      () => {
        throw new UpstreamUnreachableError('timeout', 'timed out');
      },
      () => 'served',
    ];
    const attempts: GenerationAttempt[] = [];
    const served = await dispatchWithFallback({
      modelId: 'model',
      accountId: 'acct',
      rows: [first, second],
      resilience: resilience(health),
      mayContinue: () => true,
      attempt: async () => outcomes.shift()!(),
      attempts,
    });
    expect(served.row).toBe(second);
    expect(health.reading(first)).toMatchObject({ attempts: 1, failures: 1, errorRate: 1 });
    expect(health.reading(second)).toMatchObject({ attempts: 1, failures: 0 });

    const refuse = (error: Error) =>
      dispatchWithFallback({
        modelId: 'model',
        accountId: 'acct',
        rows: [second],
        resilience: resilience(health),
        mayContinue: () => false,
        attempt: async () => {
          throw error;
        },
        attempts: [],
      }).catch(() => undefined);
    await refuse(new UpstreamHttpError(400, '{}', { contentType: 'application/json' }));
    expect(health.reading(second)).toMatchObject({ attempts: 2, failures: 0 });
    await refuse(new GatewayError('GW_VALIDATION', 'refused before sending'));
    expect(health.reading(second).attempts).toBe(2);
  });
});
