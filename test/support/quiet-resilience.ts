import { ProviderBreakers, type BreakerSettings } from '../../src/gateway/provider-breakers.ts';
import type { Resilience } from '../../src/gateway/upstream-dispatch.ts';

/** Breakers and dispatch settings for a job worker a test makes itself (the default breakers unless given), their events told no one. */
export function quietResilience(
  breakers: BreakerSettings = { failures: 5, minAccounts: 3, cooldownMs: 30_000 },
): Resilience {
  return {
    breakers: new ProviderBreakers(breakers, () => undefined),
    events: { fallback: () => undefined, retry: () => undefined },
    retryBudgetMs: 0,
    maxRetries: 0,
    traced: false,
  };
}
