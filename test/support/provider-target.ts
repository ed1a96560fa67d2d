import { Secret } from '../../src/domain/secret.ts';
import type { ProviderTarget } from '../../src/providers/provider-adapter.ts';

/** A target at `baseUrl` for codec tests, which read only its address: nothing is ever sent to it. */
export function addressOnlyTarget(baseUrl: string): ProviderTarget {
  return {
    baseUrl,
    apiKey: new Secret('unused'),
    timeoutMs: 1,
    firstByteTimeoutMs: 1,
    connectTimeoutMs: 1,
    maxEventCharacters: 1,
    headers: {},
  };
}
