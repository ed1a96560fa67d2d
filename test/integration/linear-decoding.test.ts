import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { longestEventLoopBlockMs } from '../support/event-loop.ts';
import { keyHeaders } from '../support/http-helpers.ts';
import { startFamilyGateway, type FamilyGateway } from '../support/test-gateway.ts';

/**
 * Conversations of tens of thousands of items are decoded and translated in time linear in their size: the
 * event loop is never blocked for long (a quadratic decoder took seconds on these bodies). The bound is
 * generous, not a timing: it tells linear from quadratic.
 */
const items = 40_000;

describe('decoding and translating long conversations', () => {
  let gateway: FamilyGateway;

  beforeAll(async () => {
    gateway = await startFamilyGateway();
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function withinLoopDelay(send: () => Promise<LightMyRequestResponse>): Promise<LightMyRequestResponse> {
    const { result, blockedMs } = await longestEventLoopBlockMs(send);
    expect(blockedMs).toBeLessThan(1_000);
    return result;
  }

  it('alpha responses with as many function calls in a row, refused for the balance', async () => {
    const { key } = await gateway.createFundedKey({ credits: 0 });
    const input = Array.from({ length: items }, (_, index) => ({
      type: 'function_call',
      call_id: `c${index}`,
      name: 'f',
      arguments: '{}',
    }));
    const response = await withinLoopDelay(() =>
      gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/responses',
        headers: keyHeaders(key),
        payload: { model: 'via-gemini', input: [{ role: 'user', content: 'hi' }, ...input] },
      }),
    );
    expect(response.statusCode).toBe(403);
  });

  it('gamma contents with as many calls and unmatched responses, refused for the balance', async () => {
    const { key } = await gateway.createFundedKey({ credits: 0 });
    const calls = Array.from({ length: items }, (_, index) => ({ functionCall: { name: `f${index % 7}`, args: {} } }));
    const answers = Array.from({ length: items }, (_, index) => ({
      functionResponse: { name: `g${index % 5}`, response: {} },
    }));
    const contents = [
      { role: 'user', parts: [{ text: 'hi' }] },
      { role: 'model', parts: calls },
      { role: 'user', parts: answers },
    ];
    const response = await withinLoopDelay(() =>
      gateway.request({
        method: 'POST',
        url: '/api/gamma/v1beta/models/via-openai:generateContent',
        headers: keyHeaders(key),
        payload: { contents },
      }),
    );
    expect(response.statusCode).toBe(403);
  });

  it('as many user messages in a row, merged into one Anthropic turn', async () => {
    const { key } = await gateway.createFundedKey({ credits: 100 });
    const messages = Array.from({ length: items }, () => ({ role: 'user', content: 'x' }));
    const response = await withinLoopDelay(() =>
      gateway.request({
        method: 'POST',
        url: '/api/v1/text/completions',
        headers: keyHeaders(key),
        payload: { model: 'via-anthropic', messages },
      }),
    );
    expect(response.statusCode).toBe(200);
  });
});
