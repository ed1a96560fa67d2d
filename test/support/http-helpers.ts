import { readFileSync } from 'node:fs';
import type { LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { eq } from 'drizzle-orm';
import { accounts } from '../../src/storage/schema.ts';
import { shippedConfigPath, testAdminToken, type TestGateway } from './test-gateway.ts';

/** The spec's generic error envelope as the tests read it. */
export interface EnvelopeBody {
  errors: string[];
  status: number;
  success: false;
  path: string;
  timestamp: number;
  /** On the beta surface, as Anthropic's clients read it. */
  type?: 'error';
  /** The same error in the shape the clients of the surface read (gamma: Google's `{code, message, status}`). */
  error: { message: string; type?: string; code: string | number; status?: string; details?: unknown };
}

/** The SDK error class each status is reported as (written out here, not taken from the code under test). */
function expectedErrorType(status: number): string {
  const byStatus: Record<number, string> = {
    401: 'authentication_error',
    403: 'permission_error',
    404: 'not_found_error',
    429: 'rate_limit_error',
  };
  return byStatus[status] ?? (status < 500 ? 'invalid_request_error' : 'api_error');
}

/**
 * Asserts the exact error envelope: status line, the `x-gateway-error-code` header, the key set, the types,
 * a `path` equal to the request path without its query and a `timestamp` close to now.
 */
export function expectEnvelope(
  response: LightMyRequestResponse,
  {
    status,
    code,
    path,
    sdkDetails,
  }: { status: number; code: string; path: string; sdkDetails?: Record<string, unknown> },
): EnvelopeBody {
  expect(response.statusCode, response.body).toBe(status);
  expect(response.headers['content-type']).toMatch(/^application\/json/);
  expect(response.headers['x-gateway-error-code']).toBe(code);
  const body = response.json<EnvelopeBody>();
  const message = body.errors.join('; ');
  if (path.startsWith('/api/gamma/')) {
    // Google's clients read `error.code` as the HTTP status and `error.status` as the RPC status name.
    expect(Object.keys(body).sort()).toEqual(['error', 'errors', 'path', 'status', 'success', 'timestamp']);
    expect(body.error).toEqual({
      code: status,
      message,
      status: expect.stringMatching(/^[A-Z_]+$/),
      details: [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: code, domain: 'gateway' }],
    });
  } else {
    // Anthropic's clients need a top-level `type: "error"` beside the same `error`.
    const beta = path.startsWith('/api/beta/');
    expect(Object.keys(body).sort()).toEqual(
      ['error', 'errors', 'path', 'status', 'success', 'timestamp', ...(beta ? ['type'] : [])].sort(),
    );
    if (beta) expect(body).toMatchObject({ type: 'error' });
    // `details` only where the refusal gives the SDK something to recover by (beta message threads).
    expect(body.error).toEqual({
      message,
      type: expectedErrorType(status),
      code,
      ...(sdkDetails ? { details: sdkDetails } : {}),
    });
  }
  // Only a rate limit passes with time: every other refusal tells the SDKs not to send the same request again.
  if (status >= 400 && status < 500 && code !== 'GW_RATE_LIMITED' && code !== 'GW_TOO_MANY_ATTEMPTS')
    expect(response.headers['x-should-retry']).toBe('false');
  expect(Array.isArray(body.errors)).toBe(true);
  expect(body.errors.length).toBeGreaterThan(0);
  for (const message of body.errors) {
    expect(typeof message).toBe('string');
    expect(message.length).toBeGreaterThan(0);
  }
  expect(body.status).toBe(status);
  expect(body.success).toBe(false);
  expect(body.path).toBe(path);
  expect(typeof body.timestamp).toBe('number');
  expect(Number.isInteger(body.timestamp)).toBe(true);
  expect(Math.abs(Date.now() - body.timestamp)).toBeLessThan(60_000);
  return body;
}

export const adminHeaders = { authorization: `Bearer ${testAdminToken}` } as const;

export const keyHeaders = (key: string) => ({ 'x-api-key': key });

/**
 * GETs `url` with the key until `done` holds of the answer's body (each answer a 200), and answers that body.
 * Jobs end on the gateway's workers, not on the request: a poll waits a little between tries, and gives up with
 * the last status it read once `timeoutMs` has passed.
 */
export async function pollUntil<T extends { status: string }>(
  gateway: TestGateway,
  {
    url,
    key,
    timeoutMs = 15_000,
    intervalMs = 25,
  }: { url: string; key: string; timeoutMs?: number; intervalMs?: number },
  done: (body: T) => boolean,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const response = await gateway.request({ method: 'GET', url, headers: keyHeaders(key) });
    expect(response.statusCode, response.body).toBe(200);
    const body = response.json<T>();
    if (done(body)) return body;
    if (Date.now() > deadline) throw new Error(`${url} still ${body.status} after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
export const bearer = (credential: string) => ({ authorization: `Bearer ${credential}` });

export interface AccountBody {
  id: string;
  email: string;
  creditBalance: number;
}

export interface SessionBody {
  token: string;
  account: AccountBody;
}

export interface KeyBody {
  id: string;
  name: string;
  prefix: string;
  isActive: boolean;
  limits: Partial<Record<'daily' | 'weekly' | 'monthly' | 'total', number>>;
  createdAt: string;
}

export interface CreatedKeyBody extends KeyBody {
  key: string;
}

let uniqueCounter = 0;
/** An email no other test in this process uses. */
export function uniqueEmail(label = 'user'): string {
  return `${label}-${process.pid}-${Date.now().toString(36)}-${++uniqueCounter}@example.com`;
}

export const testPassword = 'correct horse battery staple';

/** Signs up a new account over HTTP and returns the session token and account. */
export async function signup(
  gateway: TestGateway,
  email = uniqueEmail(),
): Promise<SessionBody & { response: LightMyRequestResponse }> {
  const response = await gateway.request({
    method: 'POST',
    url: '/api/v1/auth/signup',
    payload: { email, password: testPassword },
  });
  expect(response.statusCode, response.body).toBe(201);
  return { ...response.json<SessionBody>(), response };
}

/** Creates a key over HTTP with the given credential headers. */
export async function createKeyOverHttp(
  gateway: TestGateway,
  headers: Record<string, string>,
  body: { name: string; limits?: Record<string, number> } = { name: 'http key' },
): Promise<CreatedKeyBody> {
  const response = await gateway.request({ method: 'POST', url: '/api/v1/api-keys', headers, payload: body });
  expect(response.statusCode, response.body).toBe(201);
  return response.json<CreatedKeyBody>();
}

/** The shipped gateway.yaml with top-level sections replaced or added (each given as complete YAML text). */
export function shippedConfigWith(sections: Record<string, string>): string {
  let text = readFileSync(shippedConfigPath, 'utf8');
  for (const [section, replacement] of Object.entries(sections)) {
    // The section's key line may carry a comment, as the shipped file's do.
    const pattern = new RegExp(`^${section}:(?:[ \\t]+#.*)?\\n(?:(?:[ \\t].*|)\\n)*`, 'm');
    text = pattern.test(text)
      ? text.replace(pattern, `${replacement.trimEnd()}\n\n`)
      : `${text.trimEnd()}\n\n${replacement.trimEnd()}\n`;
  }
  return text;
}

export interface UsageRecordBody {
  id: string;
  modality: string;
  status: string;
  usdCost: number;
  usage?: { promptTokens: number; completionTokens: number; countedByGateway?: boolean };
  request?: unknown;
}

/** The first page of a key's account's usage records, newest first. */
export async function usageRecords(gateway: TestGateway, key: string): Promise<UsageRecordBody[]> {
  await gateway.settled();
  const response = await gateway.request({ method: 'GET', url: '/api/compat/v1/usage', headers: { 'x-api-key': key } });
  return response.json<{ results: UsageRecordBody[] }>().results;
}

/**
 * What an account still has reserved once the process has given back the credit it leased and no request
 * uses; every finished request must have brought it back to 0.
 */
export async function heldNanosOf(gateway: TestGateway, accountId: string): Promise<bigint> {
  await gateway.settled();
  await gateway.gateway.core.services.ledger.giveBackUnused();
  const [row] = await gateway.gateway.core.storage.db
    .select({ held: accounts.heldNanos })
    .from(accounts)
    .where(eq(accounts.id, accountId));
  return row?.held ?? -1n;
}

/** A provider row's breaker as `/metrics` tells it (0 closed, 1 open, 2 half-open); undefined before it has one. */
export async function breakerStateOf(
  gateway: TestGateway,
  row: { providerId: string; upstreamModel: string },
): Promise<number | undefined> {
  const scraped = (await gateway.request({ method: 'GET', url: '/metrics' })).body;
  const line = scraped
    .split('\n')
    .find(
      (candidate) =>
        candidate.startsWith('gateway_provider_breaker_state{') &&
        candidate.includes(`provider="${row.providerId}"`) &&
        candidate.includes(`upstream_model="${row.upstreamModel}"`),
    );
  return line === undefined ? undefined : Number(line.slice(line.lastIndexOf(' ') + 1));
}
