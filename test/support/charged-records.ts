import { expect } from 'vitest';
import { adminHeaders, keyHeaders } from './http-helpers.ts';
import type { TestGateway } from './test-gateway.ts';

/** One short chat completion of `model` on the alpha surface with an API key. */
export function chatAs(gateway: TestGateway, key: string, model: string) {
  return gateway.request({
    method: 'POST',
    url: '/api/alpha/v1/chat/completions',
    headers: keyHeaders(key),
    payload: { model, messages: [{ role: 'user', content: 'hello there' }] },
  });
}

/** An account's usage records, newest first, once every charge under way has settled (admin API). */
export async function chargedRecords(gateway: TestGateway, accountId: string) {
  await gateway.settled();
  const answer = await gateway.request({
    method: 'GET',
    url: `/api/admin/v1/accounts/${accountId}/generations`,
    headers: adminHeaders,
  });
  expect(answer.statusCode, answer.body).toBe(200);
  return answer.json<{ results: Array<{ model: string; usdCost: number; priceVersion?: string }> }>().results;
}
