import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from './free-port.ts';
import { adminHeaders } from './http-helpers.ts';
import { testAdminToken, testSecret } from './test-gateway.ts';

const gatewayBin = path.resolve(import.meta.dirname, '../../bin/gateway.js');

export interface GatewayChild {
  url: string;
  process: ChildProcess;
  /** The last lines it wrote, for a failing test's message. */
  output(): string;
  kill(signal: NodeJS.Signals): Promise<void>;
}

export interface GatewayChildOptions {
  configPath: string;
  dataDir: string;
  /** A PostgreSQL database to share; without it the gateway runs its embedded database under `dataDir`. */
  databaseUrl?: string;
  /** More environment variables (REDIS_URL, ...). */
  env?: Record<string, string>;
}

/** The compiled gateway (`bin/gateway.js serve`) as a process of its own, answering once it is up. */
export async function startGatewayChild(options: GatewayChildOptions): Promise<GatewayChild> {
  const port = await freePort();
  const child = spawn(process.execPath, [gatewayBin, 'serve'], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      DATA_DIR: options.dataDir,
      DATABASE_URL: options.databaseUrl ?? '',
      GATEWAY_SECRET: testSecret,
      GATEWAY_ADMIN_TOKEN: testAdminToken,
      GATEWAY_CONFIG: options.configPath,
      LOG_LEVEL: 'warn',
      NODE_OPTIONS: '',
      ...options.env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  const keep = (chunk: Buffer) => (output = (output + chunk.toString()).slice(-8000));
  child.stdout!.on('data', keep);
  child.stderr!.on('data', keep);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`the gateway exited while starting:\n${output}`);
    const up = await fetch(`${url}/api/alpha`, { method: 'HEAD' }).then(
      (response) => response.ok,
      () => false,
    );
    if (up) break;
    if (Date.now() > deadline) throw new Error(`the gateway did not start:\n${output}`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  return {
    url,
    process: child,
    output: () => output,
    kill: async (signal) => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
  };
}

/**
 * Compiled gateways sharing one PostgreSQL database (`databaseUrl`), each with a data directory of its own under
 * `dataDir` (`a`, `b`, ...). Started one after the other: the first applies the migrations.
 */
export async function startGatewayChildren(
  count: number,
  options: GatewayChildOptions & { databaseUrl: string },
): Promise<GatewayChild[]> {
  const children: GatewayChild[] = [];
  for (let index = 0; index < count; index++) {
    const name = String.fromCharCode('a'.charCodeAt(0) + index);
    children.push(await startGatewayChild({ ...options, dataDir: path.join(options.dataDir, name) }));
  }
  return children;
}

/** POSTs JSON (or no body) to a gateway process and answers its JSON; any status but 2xx throws, with the body. */
export async function postJson<T>(url: string, headers: Record<string, string>, body?: unknown): Promise<T> {
  const response = await fetch(url, {
    method: 'POST',
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  if (!response.ok) throw new Error(`POST ${url}: ${response.status} ${await response.text()}`);
  return (await response.json()) as T;
}

/** A new account of a gateway process with `credits` USD, and a key of it, made through the admin API. */
export async function fundedKeyOf(
  gateway: Pick<GatewayChild, 'url'>,
  { credits, name = 'test' }: { credits: number; name?: string },
): Promise<{ accountId: string; key: string }> {
  const account = await postJson<{ id: string }>(`${gateway.url}/api/admin/v1/accounts`, adminHeaders, {
    email: `child-${Date.now()}-${Math.random().toString(36).slice(2)}@example.com`,
    credits,
  });
  const { key } = await postJson<{ key: string }>(
    `${gateway.url}/api/admin/v1/accounts/${account.id}/api-keys`,
    adminHeaders,
    { name },
  );
  return { accountId: account.id, key };
}
