import { isDeepStrictEqual } from 'node:util';
import { Secret } from '../domain/secret.ts';
import type { ModelEntry } from './config-schema.ts';

type Pricing = NonNullable<ModelEntry['pricing']>;
import { defaultKeyId, type GatewayConfig, type ProviderConfig } from './load-config.ts';

/** Ids added, removed and changed between two configurations. */
export interface IdChanges {
  added: string[];
  removed: string[];
  changed: string[];
}

/** A model whose prices changed, in USD as gateway.yaml writes them; absent prices are null. */
export interface PriceChange {
  modelId: string;
  before: Pricing | null;
  after: Pricing | null;
}

/** A provider whose settings changed, by the names of those settings only: a key or header value is never shown. */
export interface ProviderChange {
  providerId: string;
  fields: string[];
}

/**
 * What a reload changes, without a credential anywhere: models (their rows, capabilities and limits), prices,
 * providers, voices, the reloadable upstream settings, and the settings that changed in the file but wait for
 * a restart.
 */
export interface ConfigDiff {
  models: IdChanges;
  prices: PriceChange[];
  providers: { added: string[]; removed: string[]; changed: ProviderChange[] };
  voices: IdChanges;
  /** Reloadable settings beside the catalog and providers (breakers, retries), by name. */
  settings: string[];
  /** Settings whose new value needs a restart: they keep their running value until then. */
  needsRestart: string[];
}

/** The upstream settings a reload applies; the rest of `upstream` sizes connection pools made at start. */
export const reloadableUpstreamSettings = [
  'breakerFailures',
  'breakerMinAccounts',
  'breakerCooldownMs',
  'retryBudgetMs',
  'maxRetries',
] as const;

/** The sections of the running configuration that only a start reads. */
const restartSections = [
  'server',
  'accounts',
  'rateLimits',
  'ledger',
  'usage',
  'limits',
  'upstream',
  'telemetry',
  'remoteMedia',
  'media',
  'jobs',
] as const;

/** Settings the gateway holds under another name or unit than gateway.yaml's, named as the file names them. */
const fileNames: Readonly<Record<string, string>> = {
  'accounts.sessionTtlSeconds': 'accounts.sessionTtlHours',
  'accounts.signupCreditsUsd': 'accounts.signupCredits',
  'ledger.leaseMaxNanos': 'ledger.leaseMaxUsd',
};

export function diffConfig(running: GatewayConfig, next: GatewayConfig): ConfigDiff {
  const modelsBefore = new Map(running.models.map((model) => [model.id, model]));
  const modelsAfter = new Map(next.models.map((model) => [model.id, model]));
  const prices: PriceChange[] = [];
  for (const [modelId, after] of modelsAfter) {
    const before = modelsBefore.get(modelId);
    if (before && !isDeepStrictEqual(before.pricing, after.pricing))
      prices.push({ modelId, before: before.pricing ?? null, after: after.pricing ?? null });
  }
  const withoutPricing = ({ pricing: _pricing, ...rest }: ModelEntry) => rest;
  const providers = idChanges(running.providers, next.providers, (a, b) => providerFields(a, b).length > 0);
  const upstreamChanged = reloadableUpstreamSettings
    .filter((name) => running.upstream[name] !== next.upstream[name])
    .map((name) => `upstream.${name}`);
  return {
    models: idChanges(modelsBefore, modelsAfter, (a, b) => !isDeepStrictEqual(withoutPricing(a), withoutPricing(b))),
    prices,
    providers: {
      added: providers.added,
      removed: providers.removed,
      changed: providers.changed.map((providerId) => ({
        providerId,
        fields: providerFields(running.providers.get(providerId)!, next.providers.get(providerId)!),
      })),
    },
    voices: idChanges(
      new Map(running.voices.map((voice) => [voice.voiceType, voice])),
      new Map(next.voices.map((voice) => [voice.voiceType, voice])),
      (a, b) => !isDeepStrictEqual(a, b),
    ),
    settings: upstreamChanged,
    needsRestart: restartSections
      .flatMap((section) => changedPaths(running[section], next[section], section))
      .filter((name) => !reloadableUpstreamSettings.some((setting) => name === `upstream.${setting}`))
      .map((name) => fileNames[name] ?? name),
  };
}

/** Whether the diff changes nothing that a reload applies. */
export function changesNothing(diff: ConfigDiff): boolean {
  const { models, providers, voices } = diff;
  return (
    [models.added, models.removed, models.changed, voices.added, voices.removed, voices.changed].every(
      (ids) => ids.length === 0,
    ) &&
    diff.prices.length === 0 &&
    providers.added.length + providers.removed.length + providers.changed.length === 0 &&
    diff.settings.length === 0
  );
}

function idChanges<T>(
  before: ReadonlyMap<string, T>,
  after: ReadonlyMap<string, T>,
  differ: (a: T, b: T) => boolean,
): IdChanges {
  return {
    added: [...after.keys()].filter((id) => !before.has(id)),
    removed: [...before.keys()].filter((id) => !after.has(id)),
    changed: [...after].filter(([id, value]) => before.has(id) && differ(before.get(id)!, value)).map(([id]) => id),
  };
}

/** The names of a provider's settings that differ; credentials are compared, never copied into the answer. */
function providerFields(before: ProviderConfig, after: ProviderConfig): string[] {
  const fields: string[] = [];
  for (const name of [
    'protocol',
    'baseUrl',
    'timeoutMs',
    'firstByteTimeoutMs',
    'connectTimeoutMs',
    'maxEventCharacters',
    'maxConcurrentJobs',
    'active',
  ] as const) {
    if (before[name] !== after[name]) fields.push(name);
  }
  if (before.apiKey.reveal() !== after.apiKey.reveal()) fields.push('apiKey');
  // Each of `apiKeys` by its id: added, removed, or its key or weight changed (`default` is `apiKey`, above).
  const keysBefore = new Map(before.keys.map((key) => [key.id, key]));
  const keysAfter = new Map(after.keys.map((key) => [key.id, key]));
  for (const id of new Set([...keysBefore.keys(), ...keysAfter.keys()])) {
    const [was, is] = [keysBefore.get(id), keysAfter.get(id)];
    if (id === defaultKeyId) continue;
    if (was?.apiKey.reveal() !== is?.apiKey.reveal() || was?.weight !== is?.weight) fields.push(`apiKeys.${id}`);
  }
  const headerNames = new Set([...Object.keys(before.headers), ...Object.keys(after.headers)]);
  for (const name of headerNames) {
    if (before.headers[name]?.reveal() !== after.headers[name]?.reveal()) fields.push(`headers.${name}`);
  }
  return fields;
}

/** The dotted paths of the leaves that differ between two settings objects (a secret is compared by value). */
function changedPaths(before: unknown, after: unknown, at: string): string[] {
  if (before instanceof Secret || after instanceof Secret) {
    const reveal = (value: unknown) => (value instanceof Secret ? value.reveal() : value);
    return reveal(before) === reveal(after) ? [] : [at];
  }
  if (isPlainObject(before) && isPlainObject(after)) {
    const names = new Set([...Object.keys(before), ...Object.keys(after)]);
    return [...names].flatMap((name) => changedPaths(before[name], after[name], `${at}.${name}`));
  }
  return isDeepStrictEqual(before, after) ? [] : [at];
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
