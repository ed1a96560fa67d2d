import { ProviderBreakers } from '../../src/gateway/provider-breakers.ts';
import type { Resilience } from '../../src/gateway/upstream-dispatch.ts';

/** Breakers and dispatch settings for a job worker a test makes itself: the defaults, their events told no one. */
export function quietResilience(): Resilience {
  return {
    breakers: new ProviderBreakers({ failures: 5, minAccounts: 3, cooldownMs: 30_000 }, () => undefined),
    events: { fallback: () => undefined, retry: () => undefined },
    retryBudgetMs: 0,
    maxRetries: 0,
    traced: false,
  };
}
