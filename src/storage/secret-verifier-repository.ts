import { desc, eq, sql } from 'drizzle-orm';
import type { Database } from './database.ts';
import { apiKeys, providerKeys, secretVerifiers, webhookEndpoints } from './schema.ts';

/** The one row of `secret_verifiers`: the verifier of GATEWAY_SECRET. */
const gatewaySecretRow = 'gateway-secret';

/** The stored verifier of GATEWAY_SECRET (migration 0020), and what a database without one holds sealed. */
export class SecretVerifierRepository {
  constructor(private readonly db: Database) {}

  async find(): Promise<string | undefined> {
    const [row] = await this.db
      .select({ verifier: secretVerifiers.verifier })
      .from(secretVerifiers)
      .where(eq(secretVerifiers.name, gatewaySecretRow))
      .limit(1);
    return row?.verifier;
  }

  /**
   * Stores `verifier` unless a verifier is stored already (processes starting together: the first insert wins,
   * the others change nothing), and answers the one stored, for the caller to compare with its own.
   */
  async claim(verifier: string): Promise<string> {
    await this.db
      .insert(secretVerifiers)
      .values({ name: gatewaySecretRow, verifier })
      .onConflictDoNothing({ target: secretVerifiers.name });
    const stored = await this.find();
    if (stored === undefined) throw new Error('the verifier of GATEWAY_SECRET was not stored');
    return stored;
  }

  /** Stores `verifier` in place of any other (`gateway secret adopt`); answers the one it replaced. */
  async replace(verifier: string): Promise<string | undefined> {
    return this.db.transaction(async (transaction) => {
      const [previous] = await transaction
        .select({ verifier: secretVerifiers.verifier })
        .from(secretVerifiers)
        .where(eq(secretVerifiers.name, gatewaySecretRow))
        .for('update');
      await transaction
        .insert(secretVerifiers)
        .values({ name: gatewaySecretRow, verifier })
        .onConflictDoUpdate({ target: secretVerifiers.name, set: { verifier, createdAt: sql`now()` } });
      return previous?.verifier;
    });
  }

  /**
   * The value most recently sealed with the secret (an API key's, a runtime provider key's or a webhook signing
   * secret's), if the database holds any: a database from before verifiers shows with it which secret it was used with.
   */
  async newestSealed(): Promise<string | undefined> {
    const [key] = await this.db
      .select({ sealed: apiKeys.sealedKey, createdAt: apiKeys.createdAt })
      .from(apiKeys)
      .orderBy(desc(apiKeys.createdAt))
      .limit(1);
    const [providerKey] = await this.db
      .select({ sealed: providerKeys.sealedKey, createdAt: providerKeys.createdAt })
      .from(providerKeys)
      .orderBy(desc(providerKeys.createdAt))
      .limit(1);
    const [endpoint] = await this.db
      .select({ sealed: webhookEndpoints.sealedSecret, createdAt: webhookEndpoints.createdAt })
      .from(webhookEndpoints)
      .orderBy(desc(webhookEndpoints.createdAt))
      .limit(1);
    const newest = [key, providerKey, endpoint]
      .filter((row) => row !== undefined)
      .sort((a, b) => b.createdAt.getTime() - a.createdAt.getTime())[0];
    return newest?.sealed;
  }
}
