import type { ProviderConfig } from '../config/load-config.ts';
import { GatewayError } from '../domain/errors.ts';
import { newId } from '../domain/ids.ts';
import type { BreakerState } from '../domain/provider-rows.ts';
import { Secret } from '../domain/secret.ts';
import { sealSecret, unsealSecret } from '../identity/credential-codec.ts';
import type { SecretKeys } from '../identity/secret-keys.ts';
import type { HeadroomView } from '../providers/shared/rate-limit-headroom.ts';
import type { StorageEvent } from '../storage/storage-events.ts';
import type { ProviderKeyRow, ProviderKeysRepository } from '../storage/provider-keys-repository.ts';
import type { ProviderBreakers } from './provider-breakers.ts';
import { keyEnding, type RuntimeKey, type UpstreamKey, type UpstreamKeys } from './upstream-keys.ts';

/** A provider's upstream key as the admin API shows it: never the key, at most its last 4 characters. */
export interface ProviderKeyView {
  id: string;
  providerId: string;
  label?: string;
  weight: number;
  active: boolean;
  source: 'config' | 'runtime';
  keyEnding: string;
  /** The worst state of the key's breakers over the provider's rows (closed when it has none yet). */
  breaker: BreakerState;
  /** What this process last read of the key's rate limits from the upstream's headers. */
  headroom: HeadroomView;
}

export interface NewProviderKey {
  key: string;
  label?: string;
  weight?: number;
  active?: boolean;
}

export interface ProviderKeyPatch {
  label?: string | null;
  weight?: number;
  active?: boolean;
}

export interface ProviderKeyServiceOptions {
  repository: ProviderKeysRepository;
  keys: UpstreamKeys;
  breakers: ProviderBreakers;
  secretKeys: SecretKeys;
  /** The running providers (a reload refills the map). */
  providers: ReadonlyMap<string, ProviderConfig>;
  /** Tells every gateway process sharing the database, this one excepted or not. */
  publish: (event: StorageEvent) => Promise<void>;
  /** A stored key this process cannot open (GATEWAY_SECRET changed): left out, its id reported. */
  onUnreadable: (keyId: string, error: unknown) => void;
  /** The stored keys were read and handed to the key choice (a provider the key may serve from now on). */
  onRead?: () => void;
}

/**
 * The providers' runtime upstream keys: listed with their state, added, changed and removed by the operator
 * (admin API). A change is written to storage, read back here before the answer, and announced on the event
 * channel so that every other process reads the keys again within moments. Keys are sealed with the gateway
 * secret as stored API keys are, and opened only into `Secret`s.
 */
export class ProviderKeyService {
  /** Reads of the stored keys, one after the other: the last read always applies the latest state. */
  private reading: Promise<void> = Promise.resolve();

  constructor(private readonly options: ProviderKeyServiceOptions) {}

  list(providerId: string): ProviderKeyView[] {
    this.providerOf(providerId);
    const states = this.options.breakers.keyStates(providerId);
    return this.options.keys.keysOf(providerId).map((key) => view(providerId, key, states.get(key.id)));
  }

  async create(providerId: string, input: NewProviderKey): Promise<ProviderKeyView> {
    this.providerOf(providerId);
    const key = input.key.trim();
    const row = await this.options.repository.insert({
      id: newId('pkey'),
      providerId,
      label: input.label ?? null,
      weight: input.weight ?? 1,
      isActive: input.active ?? true,
      sealedKey: sealSecret(this.options.secretKeys, key),
      keyEnding: keyEnding(new Secret(key)),
    });
    return this.changed(providerId, row.id);
  }

  async update(providerId: string, keyId: string, patch: ProviderKeyPatch): Promise<ProviderKeyView> {
    await this.storedKey(providerId, keyId);
    await this.options.repository.update(keyId, {
      ...(patch.label === undefined ? {} : { label: patch.label }),
      ...(patch.weight === undefined ? {} : { weight: patch.weight }),
      ...(patch.active === undefined ? {} : { isActive: patch.active }),
    });
    return this.changed(providerId, keyId);
  }

  /** Requests that chose the key before keep it to their end; later ones never choose it. */
  async remove(providerId: string, keyId: string): Promise<void> {
    await this.storedKey(providerId, keyId);
    await this.options.repository.delete(keyId);
    await this.announce();
  }

  /** Reads every stored key again and hands them to the key choice; after any read before it. */
  reload(): Promise<void> {
    const read = this.reading.then(() => this.readAll());
    this.reading = read.catch(() => undefined);
    return read;
  }

  private async readAll(): Promise<void> {
    const rows = await this.options.repository.list();
    const keys: RuntimeKey[] = [];
    for (const row of rows) {
      try {
        keys.push({
          id: row.id,
          providerId: row.providerId,
          label: row.label,
          weight: row.weight,
          active: row.isActive,
          apiKey: new Secret(unsealSecret(this.options.secretKeys, row.sealedKey)),
        });
      } catch (error) {
        this.options.onUnreadable(row.id, error);
      }
    }
    this.options.keys.replaceRuntime(keys);
    this.options.onRead?.();
  }

  /** Reads the keys here and tells the other processes; answers the key as it now stands. */
  private async changed(providerId: string, keyId: string): Promise<ProviderKeyView> {
    await this.announce();
    const key = this.options.keys.keysOf(providerId).find((candidate) => candidate.id === keyId);
    if (!key) throw new GatewayError('GW_NOT_FOUND', `provider "${providerId}" has no key "${keyId}"`);
    return view(providerId, key, this.options.breakers.keyStates(providerId).get(keyId));
  }

  private async announce(): Promise<void> {
    await this.reload();
    await this.options.publish({ type: 'provider-keys-changed' });
  }

  private providerOf(providerId: string): ProviderConfig {
    const provider = this.options.providers.get(providerId);
    if (!provider) throw new GatewayError('GW_NOT_FOUND', `provider "${providerId}" is not configured`);
    return provider;
  }

  /** A runtime key of the provider; a key of gateway.yaml is changed in the file, not here. */
  private async storedKey(providerId: string, keyId: string): Promise<ProviderKeyRow> {
    this.providerOf(providerId);
    const row = await this.options.repository.find(keyId);
    if (row?.providerId === providerId) return row;
    if (this.options.keys.keysOf(providerId).some((key) => key.id === keyId && key.source === 'config'))
      throw new GatewayError(
        'GW_CONFLICT',
        `key "${keyId}" of provider "${providerId}" comes from gateway.yaml: change it there and reload`,
      );
    throw new GatewayError('GW_NOT_FOUND', `provider "${providerId}" has no key "${keyId}"`);
  }
}

function view(providerId: string, key: UpstreamKey, breaker: BreakerState | undefined): ProviderKeyView {
  return {
    id: key.id,
    providerId,
    ...(key.label === undefined ? {} : { label: key.label }),
    weight: key.weight,
    active: key.active,
    source: key.source,
    keyEnding: key.ending,
    breaker: breaker ?? 'closed',
    headroom: key.headroom.view(),
  };
}
