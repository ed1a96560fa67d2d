import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { startGatewayChildren, type GatewayChild } from './gateway-child.ts';
import { adminHeaders, testPassword, uniqueEmail } from './http-helpers.ts';
import { createTestDatabase, type TestDatabase } from './test-database.ts';

/** Two compiled gateway processes on one fresh PostgreSQL database, with a client of that database. */
export interface GatewayPair {
  children: [GatewayChild, GatewayChild];
  database: TestDatabase;
  client: pg.Client;
  close(): Promise<void>;
}

/**
 * Starts both processes on `configLines` as their gateway.yaml (`startGatewayChildren`: the first migrates),
 * with `env` added to their environment (REDIS_URL, ...).
 */
export async function startGatewayPair(
  configLines: readonly string[],
  options: { env?: Record<string, string> } = {},
): Promise<GatewayPair> {
  const database = await createTestDatabase();
  const dataDir = mkdtempSync(path.join(tmpdir(), 'gw-pair-'));
  const configPath = path.join(dataDir, 'gateway.yaml');
  writeFileSync(configPath, configLines.join('\n'));
  const children = await startGatewayChildren(2, { configPath, dataDir, databaseUrl: database.url, ...options });
  const client = new pg.Client({ connectionString: database.url });
  await client.connect();
  return {
    children: [children[0]!, children[1]!],
    database,
    client,
    close: async () => {
      await client.end();
      await Promise.all(children.map((child) => child.kill('SIGTERM')));
      await database.drop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** A JSON request to one of the processes. */
export function callChild(
  child: GatewayChild,
  { method, url, headers, body }: { method: string; url: string; headers: Record<string, string>; body?: unknown },
): Promise<Response> {
  return fetch(`${child.url}${url}`, {
    method,
    headers: { 'content-type': 'application/json', ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

/** A new account signed up through `child`, granted `credits` USD by the operator: its session token and id. */
export async function fundedAccount(
  child: GatewayChild,
  credits: number,
): Promise<{ token: string; accountId: string }> {
  const signedUp = await callChild(child, {
    method: 'POST',
    url: '/api/v1/auth/signup',
    headers: {},
    body: { email: uniqueEmail('pair'), password: testPassword },
  });
  if (signedUp.status !== 201) throw new Error(`signup answered ${signedUp.status}:\n${child.output()}`);
  const { token, account } = (await signedUp.json()) as { token: string; account: { id: string } };
  const granted = await callChild(child, {
    method: 'POST',
    url: `/api/admin/v1/accounts/${account.id}/credits`,
    headers: adminHeaders,
    body: { amount: credits },
  });
  if (granted.status !== 200) throw new Error(`the credit grant answered ${granted.status}`);
  return { token, accountId: account.id };
}
