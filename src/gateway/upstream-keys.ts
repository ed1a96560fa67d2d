import { defaultKeyId, type ProviderConfig } from '../config/load-config.ts';
import type { RowRef } from '../domain/provider-rows.ts';
import type { Secret } from '../domain/secret.ts';
import type { HeadroomObserver } from '../providers/provider-adapter.ts';
import { RateLimitHeadroom } from '../providers/shared/rate-limit-headroom.ts';
import type { ProviderBreakers } from './provider-breakers.ts';

/** A key the operator added at runtime (admin API), as storage gives it back, opened. */
export interface RuntimeKey {
  id: string;
  providerId: string;
  label: string | null;
  weight: number;
  active: boolean;
  apiKey: Secret;
}

/** One upstream key of a provider, ready to send with: the provider's settings with this key, built once. */
export interface UpstreamKey {
  readonly id: string;
  readonly label: string | undefined;
  readonly weight: number;
  readonly active: boolean;
  /** `config`: gateway.yaml (`apiKey`, `apiKeys`); `runtime`: added through the admin API. */
  readonly source: 'config' | 'runtime';
  /** The key's last 4 characters, all an operator is ever shown of it. */
  readonly ending: string;
  /** The provider's settings with this key, passed to the adapter as its target. */
  readonly target: ProviderConfig & { headroom: HeadroomObserver };
  readonly headroom: RateLimitHeadroom;
  /** Whether usage records name it: the provider has named keys (not only its single `apiKey`). */
  readonly recorded: boolean;
}

/** What a key's last characters are shown as: never more than 4, and none of a key too short to spare them. */
export function keyEnding(key: Secret): string {
  const value = key.reveal();
  return value.length >= 12 ? value.slice(-4) : '';
}

/**
 * Each provider's upstream keys, from gateway.yaml and from the admin API, and the choice of one for each
 * attempt: by weight among the active keys whose breaker (row and key) lets calls through and whose
 * rate-limit headroom is not exhausted. The key lists are rebuilt whole when the configuration or the runtime
 * keys change and swapped in one assignment: an attempt keeps the key object it chose (its secret and
 * settings) to its end, whatever is removed meanwhile. A choice allocates nothing.
 */
export class UpstreamKeys {
  private rings = new Map<string, readonly UpstreamKey[]>();
  /** Headroom outlives rebuilds: a reload or another key's change does not forget what a key's upstream said. */
  private readonly headrooms = new Map<string, RateLimitHeadroom>();
  private runtime: readonly RuntimeKey[] = [];

  constructor(
    private providers: ReadonlyMap<string, ProviderConfig>,
    private readonly random: () => number = Math.random,
    private readonly now: () => number = Date.now,
  ) {
    this.rebuild();
  }

  /** The providers of a reloaded configuration. */
  replaceProviders(providers: ReadonlyMap<string, ProviderConfig>): void {
    this.providers = providers;
    this.rebuild();
  }

  /** The runtime keys as storage now holds them (every process's change, heard through LISTEN/NOTIFY). */
  replaceRuntime(keys: readonly RuntimeKey[]): void {
    this.runtime = keys;
    this.rebuild();
  }

  /**
   * The provider as requests use it. One that gateway.yaml gives no key (its `${VAR}` resolved empty, or it names
   * none) is inactive, as its rows are, until it has an active runtime key: it is then active, and its first
   * such key stands for the provider's single key (a video task resumed after a restart is polled with it).
   */
  served(provider: ProviderConfig): ProviderConfig {
    if (provider.active) return provider;
    const key = this.runtime.find((candidate) => candidate.providerId === provider.id && candidate.active);
    return key ? { ...provider, apiKey: key.apiKey, active: true } : provider;
  }

  /** A provider's keys, the file's first; empty for a provider not configured. */
  keysOf(providerId: string): readonly UpstreamKey[] {
    return this.rings.get(providerId) ?? [];
  }

  /**
   * The key an attempt on `row` is sent with, drawn by weight among the usable keys: active, weight above 0,
   * breaker letting calls through, headroom left. With none, the active keys whose breaker lets calls through
   * (the upstream will say whether it has room); then any active key (the row's breakers decide). Undefined
   * for a provider with no active key.
   */
  choose(row: RowRef, breakers: ProviderBreakers): UpstreamKey | undefined {
    const ring = this.rings.get(row.providerId);
    if (!ring || ring.length === 0) return undefined;
    if (ring.length === 1) return ring[0]!.active ? ring[0] : undefined;
    for (let tier = usable; tier <= anyActive; tier += 1) {
      let total = 0;
      for (const key of ring) if (this.fitness(key, row, breakers) <= tier) total += shareOf(key, tier);
      if (total <= 0) continue;
      let point = this.random() * total;
      let last: UpstreamKey | undefined;
      for (const key of ring) {
        if (this.fitness(key, row, breakers) > tier) continue;
        last = key;
        point -= shareOf(key, tier);
        if (point < 0) return key;
      }
      return last;
    }
    return undefined;
  }

  /** How fit the key is for a call of the row now: `usable`, `noHeadroom`, `anyActive`, or past them all (inactive). */
  private fitness(key: UpstreamKey, row: RowRef, breakers: ProviderBreakers): number {
    if (!key.active) return anyActive + 1;
    if (key.weight <= 0 || !breakers.available(row, key.id)) return anyActive;
    return key.headroom.exhausted(this.now()) ? noHeadroom : usable;
  }

  /** Whether some active key of the row's provider would be sent now (its breaker on the row lets calls through). */
  available(row: RowRef, breakers: ProviderBreakers): boolean {
    const ring = this.rings.get(row.providerId);
    if (!ring || ring.length === 0) return breakers.available(row);
    for (const key of ring) if (key.active && breakers.available(row, key.id)) return true;
    return false;
  }

  private rebuild(): void {
    const rings = new Map<string, UpstreamKey[]>();
    for (const provider of this.providers.values()) {
      // A provider without a key in the file (the sandbox, or one keyed at runtime only) has only its runtime keys.
      const configured = provider.keys;
      const runtime = this.runtime.filter((key) => key.providerId === provider.id);
      const named = runtime.length > 0 || configured.some((key) => key.id !== defaultKeyId);
      const ring = [
        ...configured.map((key) =>
          this.keyOf(provider, { ...key, label: undefined, active: true, source: 'config' }, named),
        ),
        ...runtime.map((key) =>
          this.keyOf(provider, { ...key, label: key.label ?? undefined, source: 'runtime' }, named),
        ),
      ];
      rings.set(provider.id, ring);
    }
    this.rings = rings;
  }

  private keyOf(
    provider: ProviderConfig,
    key: {
      id: string;
      apiKey: Secret;
      weight: number;
      label: string | undefined;
      active: boolean;
      source: UpstreamKey['source'];
    },
    recorded: boolean,
  ): UpstreamKey {
    const name = `${provider.id}\u0000${key.id}`;
    let headroom = this.headrooms.get(name);
    if (!headroom) {
      headroom = new RateLimitHeadroom();
      this.headrooms.set(name, headroom);
    }
    return {
      id: key.id,
      label: key.label,
      weight: key.weight,
      active: key.active,
      source: key.source,
      ending: keyEnding(key.apiKey),
      target: { ...provider, apiKey: key.apiKey, headroom },
      headroom,
      recorded,
    };
  }
}

/** Every condition met: active, weight above 0, breaker letting calls through, headroom left. */
const usable = 0;
/** All but headroom: the upstream will say whether the key has room again. */
const noHeadroom = 1;
/** Active, whatever its breaker or weight: the row's breakers decide whether the call goes. */
const anyActive = 2;

/** The key's share of the draw among the keys fit at `tier`: its weight, or an equal share where weight is set aside. */
function shareOf(key: UpstreamKey, tier: number): number {
  return key.weight > 0 ? key.weight : tier === anyActive ? 1 : 0;
}
