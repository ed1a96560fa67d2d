import { expect } from 'vitest';
import { adminHeaders, bearer, signup } from './http-helpers.ts';
import type { TestGateway } from './test-gateway.ts';

/** A signed-up account made an operator through the admin API: its session token and account id. */
export async function operatorSession(
  gateway: TestGateway,
  email?: string,
): Promise<{ token: string; accountId: string }> {
  const session = await signup(gateway, email);
  const granted = await gateway.request({
    method: 'PATCH',
    url: `/api/admin/v1/accounts/${session.account.id}`,
    headers: adminHeaders,
    payload: { role: 'operator' },
  });
  expect(granted.statusCode, granted.body).toBe(200);
  return { token: session.token, accountId: session.account.id };
}

/** A GET of the operator API with a session token. */
export async function operatorGet<T>(gateway: TestGateway, token: string, url: string): Promise<T> {
  const response = await gateway.request({ method: 'GET', url: `/api/operator/v1${url}`, headers: bearer(token) });
  expect(response.statusCode, response.body).toBe(200);
  return response.json<T>();
}
