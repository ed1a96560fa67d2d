/**
 * A Responses call passed through to OpenAI itself that names input OpenAI keeps (`previous_response_id`,
 * `conversation`, a stored `prompt`, `item_reference` input items) makes OpenAI read input the gateway never sees, so no hold bounds its cost:
 * it is charged the cost the upstream reports, past its hold, within what the account's balance and the key's
 * caps leave at settlement; the rest is recorded as `unchargedUsdCost`. So is any relayed call carrying input
 * the hold does not count, to any server of its protocol: a part its decoder left out of the prompt bound (a chat
 * file, a Responses input_file, beta thinking sent back, a gamma file by an address of no named type), or a field
 * of the forwarded request naming what the server reads (a beta thread, a search tool). Every other call (text,
 * images, a field another server is not sent) is charged at most its hold. Both ledger modes (credit leases, and a
 * hold row per request), and two processes on one database.
 */
import dns from 'node:dns';
import { eq } from 'drizzle-orm';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { usdToNanos } from '../../src/domain/money.ts';
import { apiKeys } from '../../src/storage/schema.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { fakeAnthropicKey, startAnthropicFake } from '../fakes/anthropic-fake.ts';
import { fakeGeminiKey, retrievedTokens as geminiRetrievedTokens, startGeminiFake } from '../fakes/gemini-fake.ts';
import { startLyingOpenAiFake } from '../fakes/lying-openai-fake.ts';
import { fakeOpenAiKey, retrievedTokens, startOpenAiFake } from '../fakes/openai-fake.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { balanceNanosOf } from '../support/image-jobs.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/** The gateway knows OpenAI itself by its host: the fakes are reached under it, on their own ports. */
const openAiHost = 'api.openai.com';

/**
 * `gpt` at 1 USD per million input tokens and 2 per million output tokens. A request of input `hi` with an output
 * limit of 16 holds 9 prompt tokens (2 bytes, 4 for the message, 3 for the reply) and 16 output tokens: 41,000
 * nano-USD. The fake answers `Echo: hi` (2 tokens) and bills 1 input token, plus what the stored ids name.
 */
const holdNanos = 9n * 1_000n + 16n * 2_000n;
const costOf = (storedTokens: number) => BigInt(1 + storedTokens) * 1_000n + 2n * 2_000n;

function configText(fake: FakeServer, liar: FakeServer, leases: boolean): string {
  const port = (server: FakeServer) => new URL(server.url).port;
  return [
    'providers:',
    `  openai: { protocol: openai, baseUrl: "http://${openAiHost}:${port(fake)}/v1", apiKey: ${fakeOpenAiKey} }`,
    `  liar: { protocol: openai, baseUrl: "http://${openAiHost}:${port(liar)}/v1", apiKey: ${fakeOpenAiKey} }`,
    `  compatible: { protocol: openai, baseUrl: "${fake.url}/v1", apiKey: ${fakeOpenAiKey} }`,
    `  compatible-liar: { protocol: openai, baseUrl: "${liar.url}/v1", apiKey: ${fakeOpenAiKey} }`,
    `  anthropic: { protocol: anthropic, baseUrl: "${anthropic.url}/v1", apiKey: ${fakeAnthropicKey} }`,
    `  gemini: { protocol: gemini, baseUrl: "${gemini.url}/v1beta", apiKey: ${fakeGeminiKey} }`,
    'models:',
    '  - id: gpt',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers: [{ provider: openai, model: gpt-4.1 }]',
    '  - id: runaway',
    '    inputModalities: [text, image]',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers: [{ provider: liar, model: runaway }]',
    '  - id: compatible-gpt',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers: [{ provider: compatible, model: gpt-4.1 }]',
    '  - id: compatible-runaway',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers: [{ provider: compatible-liar, model: runaway }]',
    '  - id: claude',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers: [{ provider: anthropic, model: claude-sonnet-4-5 }]',
    '  - id: gemini',
    '    inputModalities: [text, image]',
    '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
    '    providers: [{ provider: gemini, model: gemini-2.5-flash }]',
    ...(leases ? [] : ['ledger: { leaseMaxUsd: 0 }']),
  ].join('\n');
}

let fake: FakeServer;
let liar: FakeServer;
/** Started with the others; the catalog's `claude` and `gemini` rows are served by them. */
let anthropic: FakeServer;
let gemini: FakeServer;

beforeAll(async () => {
  const lookup = dns.lookup;
  // Only the name is routed: the gateway connects to the fakes as it would to OpenAI (plain HTTP, their ports).
  vi.spyOn(dns, 'lookup').mockImplementation(((hostname: string, ...rest: unknown[]) =>
    Reflect.apply(lookup, dns, [hostname === openAiHost ? '127.0.0.1' : hostname, ...rest])) as typeof dns.lookup);
  [fake, liar, anthropic, gemini] = await Promise.all([
    startOpenAiFake(),
    startLyingOpenAiFake(),
    startAnthropicFake(),
    startGeminiFake(),
  ]);
});
afterAll(async () => {
  await Promise.all([fake?.close(), liar?.close(), anthropic?.close(), gemini?.close()]);
  vi.restoreAllMocks();
});

interface Body {
  status: string;
  output: unknown[];
}

/** A Responses call of input `hi` with an output limit of 16, and `fields` besides. */
function respond(gateway: TestGateway, key: string, fields: Record<string, unknown>) {
  return gateway.request({
    method: 'POST',
    url: '/api/alpha/v1/responses',
    headers: { 'x-api-key': key },
    payload: { model: 'gpt', input: 'hi', max_output_tokens: 16, ...fields },
  });
}

async function keyOf(gateway: TestGateway, keyId: string) {
  const [row] = await gateway.gateway.core.storage.db.select().from(apiKeys).where(eq(apiKeys.id, keyId));
  return row!;
}

const nanosOf = (usd: number | undefined) => BigInt(Math.round((usd ?? 0) * 1e9));

/** The key's one record: what was charged and what was not, in nano-USD. */
async function chargeOf(gateway: TestGateway, key: string) {
  const [record, ...others] = await usageRecords(gateway, key);
  expect(others).toEqual([]);
  const usage = record!.usage as { unchargedUsdCost?: number; promptTokens: number } | undefined;
  return { charged: nanosOf(record!.usdCost), uncharged: nanosOf(usage?.unchargedUsdCost), usage };
}

describe.each([
  { mode: 'credit leases', leases: true },
  { mode: 'hold rows', leases: false },
])('a Responses call to OpenAI itself reading input it keeps ($mode)', ({ leases }) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ configText: configText(fake, liar, leases) });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('is charged its whole reported cost past its hold when the balance allows', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await respond(gateway, key, { previous_response_id: 'resp_earlier-999999' });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.json<Body>()).toMatchObject({ status: 'completed', output: [{ content: [{ text: 'Echo: hi' }] }] });
    expect(fake.requests.at(-1)!.body).toMatchObject({ previous_response_id: 'resp_earlier-999999' });
    const cost = costOf(999_999);
    expect(cost).toBeGreaterThan(20n * holdNanos);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('streamed, with a conversation and a stored prompt, is charged the same way', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await respond(gateway, key, {
      stream: true,
      conversation: { id: 'conv_earlier-400000' },
      prompt: { id: 'pmpt_stored-100000' },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.body).toContain('response.completed');
    const cost = costOf(500_000);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('with earlier items named by id (the AI SDK sends its earlier answers so), is charged the same way', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await respond(gateway, key, {
      input: [
        { type: 'item_reference', id: 'msg_earlier-300000' },
        { role: 'user', content: 'hi' },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(300_000);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('with a search tool, is charged what the search found, past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await respond(gateway, key, { tools: [{ type: 'web_search' }] });
    expect(response.statusCode, response.body).toBe(200);
    expect(fake.requests.at(-1)!.body).toMatchObject({ tools: [{ type: 'web_search' }] });
    const cost = costOf(retrievedTokens);
    expect(cost).toBeGreaterThan(20n * holdNanos);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('is charged up to the balance when the balance is less: it ends at exactly 0, the rest uncharged', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 0.5 });
    const response = await respond(gateway, key, { previous_response_id: 'resp_earlier-999999' });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(999_999);
    expect(await chargeOf(gateway, key)).toMatchObject({
      charged: usdToNanos(0.5),
      uncharged: cost - usdToNanos(0.5),
    });
    expect(await balanceNanosOf(gateway, accountId)).toBe(0n);
  });

  it("is charged up to the key's daily cap when that is lower", async () => {
    const { accountId, keyId, key } = await gateway.createFundedKey({ credits: 10, limits: { daily: 0.2 } });
    const response = await respond(gateway, key, { previous_response_id: 'resp_earlier-999999' });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(999_999);
    expect(await chargeOf(gateway, key)).toMatchObject({
      charged: usdToNanos(0.2),
      uncharged: cost - usdToNanos(0.2),
    });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(9.8));
    expect((await keyOf(gateway, keyId)).spentDayNanos).toBe(usdToNanos(0.2));
  });

  it('is held at settlement to a cap lowered while it ran', async () => {
    const { accountId, keyId } = await gateway.createFundedKey({ credits: 10, limits: { daily: 5 } });
    const { ledger, apiKeys } = gateway.gateway.core.services;
    const reservation = await ledger.reserve({ accountId, apiKeyId: keyId, amountNanos: holdNanos, modelId: 'gpt' });
    // The operator lowers it (the owner may not below what work under way holds).
    await apiKeys.setLimits(null, keyId, { daily: 0.3 });
    // The key's lease gives back what it leased under the old cap: credit still on its way back counts as held,
    // and a claim past the hold takes only what is free beyond every hold (so it would be charged a little less).
    await ledger.giveBackUnused();
    const settled = await reservation.settle({
      costNanos: usdToNanos(1),
      modality: 'text',
      status: 'succeeded',
      unseenInput: true,
    });
    expect(settled.costNanos).toBe(usdToNanos(0.3));
    expect((await keyOf(gateway, keyId)).spentDayNanos).toBe(usdToNanos(0.3));
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(9.7));
  });

  it('other calls are charged at most their hold: one naming no stored input, one to another server', async () => {
    const ordinary = await gateway.createFundedKey({ credits: 10 });
    // OpenAI's host, no stored input named, an upstream reporting 5,000,000 output tokens: the hold bounds it.
    const runaway = await respond(gateway, ordinary.key, { model: 'runaway', store: true });
    expect(runaway.statusCode, runaway.body).toBe(200);
    const charge = await chargeOf(gateway, ordinary.key);
    expect(charge.charged).toBe(holdNanos);
    expect(charge.uncharged).toBeGreaterThan(0n);

    // Another server is sent none of the fields (named as dropped): the call reads nothing it was not sent.
    const compatible = await gateway.createFundedKey({ credits: 10 });
    const relayed = await respond(gateway, compatible.key, {
      model: 'compatible-gpt',
      previous_response_id: 'resp_earlier-999999',
    });
    expect(relayed.statusCode, relayed.body).toBe(200);
    expect(relayed.headers['x-gateway-dropped-parameters']).toBe('previous_response_id');
    expect(await chargeOf(gateway, compatible.key)).toMatchObject({ charged: costOf(0), uncharged: 0n });

    // Nor a search tool: such a server, however much it reports, is held to the hold.
    const bounded = await gateway.createFundedKey({ credits: 10 });
    const lying = await respond(gateway, bounded.key, {
      model: 'compatible-runaway',
      previous_response_id: 'resp_earlier-999999',
      tools: [{ type: 'web_search' }],
    });
    expect(lying.statusCode, lying.body).toBe(200);
    expect(lying.headers['x-gateway-dropped-parameters']).toBe('previous_response_id,tools');
    const lyingCharge = await chargeOf(gateway, bounded.key);
    expect(lyingCharge.charged).toBe(holdNanos);
    expect(lyingCharge.uncharged).toBeGreaterThan(0n);
  });
});

describe('many such calls settling at once, from two processes on one database', () => {
  let gateways: TestGateway[];
  beforeAll(async () => {
    const first = await startTestGateway({ configText: configText(fake, liar, true) });
    // The second process takes a hold row per request: both ledger modes race on the same rows.
    const second = await startTestGateway({
      configText: configText(fake, liar, false),
      sharedDatabase: first.database,
    });
    gateways = [first, second];
  });
  afterAll(async () => {
    // The process that made the database drops it: it closes last.
    for (const gateway of [...(gateways ?? [])].reverse()) await gateway.close();
  });

  /**
   * `calls` calls of the key, alternating between the processes, all at once; each costs about 0.3 USD. Those that
   * arrive once the balance or the cap is spent are refused, as any request then is.
   */
  async function burst(key: string, calls: number) {
    const responses = await Promise.all(
      Array.from({ length: calls }, (_, index) =>
        respond(gateways[index % 2]!, key, { previous_response_id: `resp_earlier-${300_000 + index}` }),
      ),
    );
    const answered = responses.filter((response) => response.statusCode === 200).length;
    for (const response of responses) expect([200, 403, 429], response.body).toContain(response.statusCode);
    // More were answered than the balance or the cap covers whole: the last ones are charged in part.
    expect(answered).toBeGreaterThan(4);
    await Promise.all(gateways.map((gateway) => gateway.settled()));
    const records = await usageRecords(gateways[0]!, key);
    expect(records).toHaveLength(answered);
    let charged = 0n;
    for (const record of records) {
      const usage = record.usage as { unchargedUsdCost?: number; promptTokens: number };
      const cost = costOf(usage.promptTokens - 1);
      expect(nanosOf(record.usdCost) + nanosOf(usage.unchargedUsdCost)).toBe(cost);
      charged += nanosOf(record.usdCost);
    }
    return charged;
  }

  it('never take the balance below zero: together they are charged the balance', async () => {
    const { accountId, key } = await gateways[0]!.createFundedKey({ credits: 1 });
    const charged = await burst(key, 16);
    const balance = await balanceNanosOf(gateways[0]!, accountId);
    expect(balance).toBeGreaterThanOrEqual(0n);
    expect(charged).toBe(usdToNanos(1) - balance);
    // Spent, but for what the leasing process may still hold unused (a few holds' worth) when the other's last
    // settlement runs: credit leased is no one else's to charge.
    expect(balance).toBeLessThan(usdToNanos(0.01));
  });

  it('never take the key past its daily cap: together they are charged the cap', async () => {
    const { accountId, keyId, key } = await gateways[0]!.createFundedKey({ credits: 10, limits: { daily: 1 } });
    const charged = await burst(key, 16);
    expect((await keyOf(gateways[0]!, keyId)).spentDayNanos).toBe(charged);
    expect(charged).toBeLessThanOrEqual(usdToNanos(1));
    expect(charged).toBeGreaterThan(usdToNanos(0.99));
    expect(await balanceNanosOf(gateways[0]!, accountId)).toBe(usdToNanos(10) - charged);
  });
});

/** A chat call of `content` as the user's message, with an output limit of 16. */
function chat(gateway: TestGateway, key: string, { model, content }: { model: string; content: unknown }) {
  return gateway.request({
    method: 'POST',
    url: '/api/alpha/v1/chat/completions',
    headers: { 'x-api-key': key },
    payload: { model, max_tokens: 16, messages: [{ role: 'user', content }] },
  });
}

/** A gamma generateContent call of the user's `parts` to `gemini`, with an output limit of 16, and `fields` besides. */
function generate(gateway: TestGateway, key: string, { parts, ...fields }: { parts: unknown[]; tools?: unknown[] }) {
  return gateway.request({
    method: 'POST',
    url: '/api/gamma/v1beta/models/gemini:generateContent',
    headers: { 'x-goog-api-key': key },
    payload: { contents: [{ role: 'user', parts }], generationConfig: { maxOutputTokens: 16 }, ...fields },
  });
}

describe.each([
  { mode: 'credit leases', leases: true },
  { mode: 'hold rows', leases: false },
])('a relayed call carrying input its hold does not count ($mode)', ({ leases }) => {
  let gateway: TestGateway;
  beforeAll(async () => {
    gateway = await startTestGateway({ configText: configText(fake, liar, leases) });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  it('a chat file named by id, to a server of the protocol other than OpenAI, is charged past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await chat(gateway, key, {
      model: 'compatible-gpt',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'file', file: { file_id: 'file-report-300000' } },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(300_000);
    expect(cost).toBeGreaterThan(20n * holdNanos);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('a Responses input_file sent inline is charged past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const fileData = `data:application/pdf;base64,${'JVBE'.repeat(50_000)}`;
    const response = await respond(gateway, key, {
      input: [
        {
          role: 'user',
          content: [
            { type: 'input_text', text: 'hi' },
            { type: 'input_file', filename: 'report.pdf', file_data: fileData },
          ],
        },
      ],
    });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(Math.ceil(fileData.length / 4));
    expect(cost).toBeGreaterThan(20n * holdNanos);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('a beta call continuing a message thread is charged past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': key },
      payload: {
        model: 'claude',
        max_tokens: 16,
        messages: [{ role: 'user', content: 'hi' }],
        thread: { type: 'continue', previous_message_id: 'msg_x-200000' },
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(anthropic.requests.at(-1)!.body).toMatchObject({ thread: { previous_message_id: 'msg_x-200000' } });
    const cost = costOf(200_000);
    expect(cost).toBeGreaterThan(20n * holdNanos);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('a beta call sending back thinking (the model reads it again; the bound counts none of it) is charged past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const thinking = Array.from({ length: 5_000 }, () => 'step').join(' ');
    const response = await gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': key },
      payload: {
        model: 'claude',
        max_tokens: 16,
        messages: [
          { role: 'user', content: 'hi' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking, signature: 'sig' },
              { type: 'redacted_thinking', data: 'A'.repeat(40_000) },
              { type: 'text', text: 'ok' },
            ],
          },
          { role: 'user', content: 'go on' },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    // 4 words of text, 5,000 of thinking and 10,000 tokens of redacted thinking; "Echo: go on" out.
    const cost = 15_004n * 1_000n + 3n * 2_000n;
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('a gamma file by an address of no named type (a video, say), bounded as a picture, is charged past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await generate(gateway, key, {
      parts: [{ text: 'hi' }, { fileData: { fileUri: 'https://www.youtube.com/watch?v=talk-300000' } }],
    });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(300_000);
    expect(cost).toBeGreaterThan(20n * (holdNanos + 2_000n * 1_000n));
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('a gamma call with a search tool is charged what the search found, past its hold', async () => {
    const { accountId, key } = await gateway.createFundedKey({ credits: 10 });
    const response = await generate(gateway, key, { parts: [{ text: 'hi' }], tools: [{ googleSearch: {} }] });
    expect(response.statusCode, response.body).toBe(200);
    const cost = costOf(geminiRetrievedTokens);
    expect(cost).toBeGreaterThan(20n * holdNanos);
    expect(await chargeOf(gateway, key)).toMatchObject({ charged: cost, uncharged: 0n });
    expect(await balanceNanosOf(gateway, accountId)).toBe(usdToNanos(10) - cost);
  });

  it('a chat call of text, or of text and an image (counted), is still charged at most its hold', async () => {
    const text = await gateway.createFundedKey({ credits: 10 });
    const plain = await chat(gateway, text.key, { model: 'runaway', content: 'hi' });
    expect(plain.statusCode, plain.body).toBe(200);
    const charge = await chargeOf(gateway, text.key);
    expect(charge.charged).toBe(holdNanos);
    expect(charge.uncharged).toBeGreaterThan(0n);

    const pictured = await gateway.createFundedKey({ credits: 10 });
    const image = await chat(gateway, pictured.key, {
      model: 'runaway',
      content: [
        { type: 'text', text: 'hi' },
        { type: 'image_url', image_url: { url: 'https://example.com/cat.png' } },
      ],
    });
    expect(image.statusCode, image.body).toBe(200);
    const imageCharge = await chargeOf(gateway, pictured.key);
    // The image is in the bound at 2,000 tokens.
    expect(imageCharge.charged).toBe(holdNanos + 2_000n * 1_000n);
    expect(imageCharge.uncharged).toBeGreaterThan(0n);
  });
});
