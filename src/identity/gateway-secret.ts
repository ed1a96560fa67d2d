import { timingSafeEqual } from 'node:crypto';
import type { SecretVerifierRepository } from '../storage/secret-verifier-repository.ts';
import { unsealSecret } from './credential-codec.ts';
import type { SecretKeys } from './secret-keys.ts';

/** A process whose GATEWAY_SECRET is not the database's: it refuses to start (exit status 1), naming neither secret. */
export class GatewaySecretMismatchError extends Error {
  constructor(problem: string) {
    super(
      `${problem} Start every process and CLI command on this database with the same GATEWAY_SECRET (in embedded mode, the one generated into DATA_DIR/gateway-secret). To make this secret the database's on purpose, run "gateway secret adopt --yes" with it: what was stored under the other (API keys, sessions, provider keys added at runtime, webhook signing secrets) then stops working.`,
    );
    this.name = 'GatewaySecretMismatchError';
  }
}

/** What `adopt` found: no verifier (now this secret's), another secret's (replaced), or this secret's already. */
export type AdoptedSecret = 'stored' | 'replaced' | 'unchanged';

function sameVerifier(stored: string, own: string): boolean {
  const a = Buffer.from(stored);
  const b = Buffer.from(own);
  return a.length === b.length && timingSafeEqual(a, b);
}

function opens(secretKeys: SecretKeys, sealed: string): boolean {
  try {
    unsealSecret(secretKeys, sealed);
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether this process has the GATEWAY_SECRET the database is used with. A process with another one would seal
 * and hash credentials that every rightly configured process refuses (a key printed by `gateway keys create`
 * answering 401 everywhere), and refuse theirs. The database keeps a verifier of the secret (SecretKeys.verifier,
 * never the secret): the first process to open it stores its own, race-safe (the first insert wins, and every
 * process compares with the one stored); every later one compares. A database from before verifiers is given one
 * only by a process whose secret opens the newest value sealed in it, when it holds any.
 */
export class GatewaySecret {
  constructor(private readonly options: { repository: SecretVerifierRepository; secretKeys: SecretKeys }) {}

  /** Refuses (GatewaySecretMismatchError) when this process's secret is not the database's. */
  async check(): Promise<void> {
    const { repository, secretKeys } = this.options;
    let stored = await repository.find();
    if (stored === undefined) {
      const sealed = await repository.newestSealed();
      if (sealed !== undefined && !opens(secretKeys, sealed))
        throw new GatewaySecretMismatchError(
          'GATEWAY_SECRET does not open the credentials this database holds: they were sealed with another secret.',
        );
      stored = await repository.claim(secretKeys.verifier);
    }
    if (!sameVerifier(stored, secretKeys.verifier))
      throw new GatewaySecretMismatchError(
        'GATEWAY_SECRET is not the secret this database is used with: the API keys and sessions stored in it would answer 401, and keys made with this one would answer 401 in every process that has the right one.',
      );
  }

  /** Makes this process's secret the database's (`gateway secret adopt`): every process with another then refuses to start. */
  async adopt(): Promise<AdoptedSecret> {
    const { repository, secretKeys } = this.options;
    const previous = await repository.replace(secretKeys.verifier);
    if (previous === undefined) return 'stored';
    return sameVerifier(previous, secretKeys.verifier) ? 'unchanged' : 'replaced';
  }
}
