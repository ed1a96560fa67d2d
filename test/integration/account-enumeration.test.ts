/**
 * Whether an email has an account must not show through login. (Signup cannot hide it: see the account
 * policy in docs/accounts.md and AccountService.signup.)
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, signup, testPassword, uniqueEmail } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!;

describe('account enumeration', () => {
  let gateway: TestGateway;

  beforeAll(async () => {
    gateway = await startTestGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const login = (email: string, password: string) =>
    gateway.request({ method: 'POST', url: '/api/v1/auth/login', payload: { email, password } });

  /** The refusal as a client sees it, minus what differs on every answer. */
  async function refusal(
    email: string,
  ): Promise<{ status: number; code: string; errors: string[]; durationMs: number }> {
    const started = performance.now();
    const response = await login(email, 'not the password at all');
    const durationMs = performance.now() - started;
    const body = expectEnvelope(response, { status: 401, code: 'GW_INVALID_CREDENTIALS', path: '/api/v1/auth/login' });
    return {
      status: response.statusCode,
      code: String(response.headers['x-gateway-error-code']),
      errors: body.errors,
      durationMs,
    };
  }

  it('refuses a login the same way, in about the same time, whether the email has an account, has one without a password, or has none', async () => {
    const rounds = 5;
    const known: Array<Awaited<ReturnType<typeof refusal>>> = [];
    const passwordless: typeof known = [];
    const unknown: typeof known = [];
    for (let round = 0; round < rounds; round++) {
      // A fresh account each round, so no email's failure count comes near its throttle.
      const email = uniqueEmail('known');
      await signup(gateway, email);
      const withoutPassword = uniqueEmail('admin-made');
      await gateway.gateway.core.services.accounts.createAccount({ email: withoutPassword });
      known.push(await refusal(email));
      passwordless.push(await refusal(withoutPassword));
      unknown.push(await refusal(uniqueEmail('nobody')));
    }
    const shape = ({ status, code, errors }: (typeof known)[number]) => ({ status, code, errors });
    for (const answer of [...passwordless, ...unknown]) expect(shape(answer)).toEqual(shape(known[0]!));
    // A login for an unknown email computes a password hash too: without it, it answered in a few
    // milliseconds where a wrong password took the whole scrypt (tens of milliseconds).
    const knownMs = median(known.map((answer) => answer.durationMs));
    expect(median(unknown.map((answer) => answer.durationMs))).toBeGreaterThan(knownMs * 0.5);
    expect(median(passwordless.map((answer) => answer.durationMs))).toBeGreaterThan(knownMs * 0.5);
    // And the right password still signs in.
    const email = uniqueEmail('known');
    await signup(gateway, email);
    expect((await login(email, testPassword)).statusCode).toBe(200);
  });

  it('still answers 409 to a signup for a taken email (a signup opens a session at once, so it cannot pretend)', async () => {
    const email = uniqueEmail('taken');
    await signup(gateway, email);
    const again = await gateway.request({
      method: 'POST',
      url: '/api/v1/auth/signup',
      payload: { email, password: 'another long password' },
    });
    expectEnvelope(again, { status: 409, code: 'GW_CONFLICT', path: '/api/v1/auth/signup' });
  });
});
