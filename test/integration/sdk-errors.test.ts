import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EnvelopeBody } from '../support/http-helpers.ts';
import { sandboxConfigYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

const configText = sandboxConfigYaml();

interface Case {
  what: string;
  status: number;
  model: string;
  key: () => string;
}

/**
 * Gateway errors read through each official SDK: the SDK's own error must carry the gateway's message,
 * not "status code (no body)" or a bare status.
 */
describe('gateway errors as the official SDKs report them', () => {
  let gateway: TestGateway;
  let address: string;
  let fundedKey: string;
  let brokeKey: string;

  beforeAll(async () => {
    gateway = await startTestGateway({ configText });
    address = await gateway.app.listen({ port: 0, host: '127.0.0.1' });
    fundedKey = (await gateway.createFundedKey({ credits: 1 })).key;
    brokeKey = (await gateway.createFundedKey({ credits: 0 })).key;
  });
  afterAll(async () => gateway?.close());

  const cases: Case[] = [
    { what: 'a bad key (401)', status: 401, model: 'sandbox-echo', key: () => 'gwk_not-a-real-key' },
    { what: 'an unknown model (400)', status: 400, model: 'no-such-model', key: () => fundedKey },
    { what: 'an empty balance (403)', status: 403, model: 'sandbox-echo', key: () => brokeKey },
  ];

  /** The message the gateway itself sends for the same call, read from its envelope. */
  async function gatewayMessage(
    url: string,
    key: string,
    { payload, status }: { payload: Record<string, unknown>; status: number },
  ): Promise<string> {
    const response = await gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    expect(response.statusCode).toBe(status);
    const body = response.json<EnvelopeBody>();
    expect(body.error.message).toBe(body.errors.join('; '));
    return body.error.message;
  }

  for (const { what, status, model, key } of cases) {
    it(`openai shows the gateway's message for ${what}`, async () => {
      const message = await gatewayMessage('/api/alpha/v1/chat/completions', key(), {
        payload: { model, messages: [{ role: 'user', content: 'hi' }] },
        status,
      });
      const client = new OpenAI({ apiKey: key(), baseURL: `${address}/api/alpha/v1`, maxRetries: 0 });
      const error = await client.chat.completions
        .create({ model, messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(OpenAI.APIError);
      expect((error as InstanceType<typeof OpenAI.APIError>).status).toBe(status);
      expect((error as Error).message).toBe(`${status} ${message}`);
    });

    it(`anthropic shows the gateway's message for ${what}`, async () => {
      const message = await gatewayMessage('/api/beta/v1/messages', key(), {
        payload: { model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] },
        status,
      });
      const client = new Anthropic({ apiKey: key(), baseURL: `${address}/api/beta`, maxRetries: 0 });
      const error = await client.messages
        .create({ model, max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
        .catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(Anthropic.APIError);
      const apiError = error as InstanceType<typeof Anthropic.APIError>;
      expect(apiError.status).toBe(status);
      expect(apiError.apiMessage).toBe(message);
      expect(apiError.message).toContain(JSON.stringify(message).slice(1, -1));
    });

    it(`@google/genai shows the gateway's message for ${what}`, async () => {
      const message = await gatewayMessage(`/api/gamma/v1beta/models/${model}:generateContent`, key(), {
        payload: { contents: 'hi' },
        status,
      });
      const client = new GoogleGenAI({
        apiKey: key(),
        httpOptions: { baseUrl: `${address}/api/gamma`, retryOptions: { attempts: 1 } },
      });
      const error = await client.models.generateContent({ model, contents: 'hi' }).catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(ApiError);
      expect((error as ApiError).status).toBe(status);
      expect((error as Error).message).toContain(JSON.stringify(message).slice(1, -1));
      expect((JSON.parse((error as Error).message) as { error: { message: string } }).error.message).toBe(message);
    });
  }

  it('a spent daily cap: 429 that says when the day starts afresh, and the SDKs with their defaults do not resend it', async () => {
    const { key } = await gateway.createFundedKey({ credits: 1, limits: { daily: 0.000001 } });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { authorization: `Bearer ${key}` },
      payload: { model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(response.statusCode).toBe(429);
    expect(response.headers['x-should-retry']).toBe('false');
    const now = new Date();
    const midnight = Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1);
    expect(Math.abs(Number(response.headers['retry-after']) - (midnight - now.getTime()) / 1000)).toBeLessThan(5);

    // Each SDK with its default retries: one request reaches the gateway, not three.
    let calls = 0;
    const counting: typeof fetch = (input, init) => {
      calls += 1;
      return fetch(input, init);
    };
    const openai = new OpenAI({ apiKey: key, baseURL: `${address}/api/alpha/v1`, fetch: counting });
    const refused = await openai.chat.completions
      .create({ model: 'sandbox-echo', messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect((refused as InstanceType<typeof OpenAI.APIError>).status).toBe(429);
    expect(calls).toBe(1);
    calls = 0;
    const anthropic = new Anthropic({ apiKey: key, baseURL: `${address}/api/beta`, fetch: counting });
    const alsoRefused = await anthropic.messages
      .create({ model: 'sandbox-echo', max_tokens: 10, messages: [{ role: 'user', content: 'hi' }] })
      .catch((caught: unknown) => caught);
    expect((alsoRefused as InstanceType<typeof Anthropic.APIError>).status).toBe(429);
    expect(calls).toBe(1);
  });
});
