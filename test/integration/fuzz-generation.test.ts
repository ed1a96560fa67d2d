/**
 * Property-based fuzzing of every generation route against upstreams that answer at random: as the real
 * protocol does, or with garbage, HTML, a cut body, an endless line, a stream that never ends, no answer at
 * all, or an error status with a body that is not the protocol's. Bodies are random too: valid requests
 * with fields replaced by values of the wrong type, huge, non-finite or deeply nested, and raw texts that are
 * barely JSON. Whatever happens:
 *   1. the answer is 2xx, 4xx, 502 or 503, or an upstream's own status relayed (a 500 too), and it comes;
 *   2. every 4xx the gateway makes itself is the spec's envelope;
 *   3. an upstream answer that is not its protocol's is never relayed as a success;
 *   4. afterwards no hold is outstanding, no balance is below zero and no key is past a cap;
 *   5. a body with U+0000 or a lone surrogate in any string or field name, or a `__proto__`, `constructor` or
 *      `prototype` field anywhere, answers 400 (text storage cannot hold is refused before anything runs).
 */
import { sql } from 'drizzle-orm';
import fc from 'fast-check';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startAnthropicFake, fakeAnthropicKey } from '../fakes/anthropic-fake.ts';
import {
  chaosBehaviours,
  startChaosUpstream,
  type ChaosBehaviour,
  type ChaosUpstream,
} from '../fakes/chaos-upstream.ts';
import { fakeGeminiKey, startGeminiFake } from '../fakes/gemini-fake.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';
import { poisonArb, poisoned, withUnstorable } from '../support/hostile-text.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';
import { uncheckedRows } from '../support/unchecked-rows.ts';

const seed = process.env.FUZZ_SEED ? Number(process.env.FUZZ_SEED) : undefined;
const runScale = process.env.FUZZ_SCALE ? Number(process.env.FUZZ_SCALE) : 1;

let gateway: TestGateway;
let chaos: ChaosUpstream;
const keys: string[] = [];

const provider = (name: string, { family, base, apiKey }: { family: string; base: string; apiKey: string }) =>
  `  ${name}: { protocol: ${family}, baseUrl: "${chaos.url}/${base}", apiKey: ${apiKey}, timeoutMs: 1500, firstByteTimeoutMs: 500 }`;
const model = (
  id: string,
  { providerName, upstream, extra = '' }: { providerName: string; upstream: string; extra?: string },
) =>
  `  - id: ${id}\n    limits: { maxOutputTokens: 200 }\n    pricing: { inputPerMTok: 50, outputPerMTok: 100 }\n${extra}    providers: [{ provider: ${providerName}, model: ${upstream} }]`;
const embedding = (id: string, providerName: string, upstream: string) =>
  `  - id: ${id}\n    outputModalities: [embedding]\n    pricing: { inputPerMTok: 50 }\n    providers: [{ provider: ${providerName}, model: ${upstream} }]`;

const textModels = ['via-openai', 'via-anthropic', 'via-gemini', 'via-sandbox'];
const embeddingModels = ['embed-openai', 'embed-gemini', 'sandbox-embed'];
const anyModel = fc.constantFrom(...textModels, ...embeddingModels, 'no-such-model');
/** Mostly a model the route serves, so most cases reach the upstream; sometimes any. */
const modelFor = (route: { embeds?: true }) =>
  fc.oneof(
    { weight: 4, arbitrary: fc.constantFrom(...(route.embeds ? embeddingModels : textModels)) },
    { weight: 1, arbitrary: anyModel },
  );

beforeAll(async () => {
  const [openai, anthropic, gemini] = await Promise.all([startOpenAiFake(), startAnthropicFake(), startGeminiFake()]);
  chaos = await startChaosUpstream({ openai, anthropic, gemini });
  gateway = await startTestGateway({
    upstreams: [chaos, openai, anthropic, gemini],
    configText: [
      'providers:',
      provider('openai', { family: 'openai', base: 'openai/v1', apiKey: fakeOpenAiKey }),
      provider('anthropic', { family: 'anthropic', base: 'anthropic/v1', apiKey: fakeAnthropicKey }),
      provider('gemini', { family: 'gemini', base: 'gemini/v1beta', apiKey: fakeGeminiKey }),
      '  sandbox: { protocol: sandbox }',
      'models:',
      model('via-openai', { providerName: 'openai', upstream: 'gpt-4o-mini' }),
      model('via-anthropic', { providerName: 'anthropic', upstream: 'claude-sonnet-4-5-20250929' }),
      model('via-gemini', { providerName: 'gemini', upstream: 'gemini-2.5-flash' }),
      model('via-sandbox', { providerName: 'sandbox', upstream: 'echo' }),
      embedding('embed-openai', 'openai', 'text-embedding-3-small'),
      embedding('embed-gemini', 'gemini', 'gemini-embedding-001'),
      embedding('sandbox-embed', 'sandbox', 'embedding'),
      '  - { id: sandbox-image, outputModalities: [image], pricing: { perImage: 0.001 }, providers: [{ provider: sandbox, model: image }] }',
      '  - { id: sandbox-video, outputModalities: [video], pricing: { perVideoSecond: 0.001 }, providers: [{ provider: sandbox, model: video }] }',
      'upstream: { maxEventCharacters: 65536 }',
      'jobs: { taskPollMs: 20, idlePollMs: 50 }',
    ].join('\n'),
  });
  // Rich, capped and nearly empty: admissions, cap refusals and balance refusals all happen.
  for (const options of [
    { credits: 50 },
    { credits: 50, limits: { daily: 0.02, total: 0.05 } },
    { credits: 0.0004 },
    { credits: 0 },
  ]) {
    keys.push((await gateway.createFundedKey(options)).key);
  }
});
afterAll(async () => {
  await gateway?.close();
});

// ---------------------------------------------------------------------------------------------------------------
// Bodies.

/** Values a field should never have: wrong types, extremes, deep nesting. */
const evil: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, '', -1, 0, 1.5, 2 ** 53 + 1, 1e300, -1e300, Number.MAX_VALUE, [], {}, 'x'.repeat(5_000)),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  withUnstorable(fc.string({ maxLength: 40 }), 2),
  fc.nat({ max: 60 }).map((depth) => nest(depth)),
  fc.jsonValue({ maxDepth: 3 }),
);

function nest(depth: number): unknown {
  let value: unknown = 'deep';
  for (let level = 0; level < depth; level++) value = level % 2 === 0 ? [value] : { value };
  return value;
}

interface Route {
  name: string;
  embeds?: true;
  url: (model: string) => string;
  body: (model: string) => Record<string, unknown>;
}

const messages = [{ role: 'user', content: 'hello fuzz' }];
const routes: Route[] = [
  { name: 'native', url: () => '/api/v1/text/completions', body: (m) => ({ model: m, messages, maxTokens: 20 }) },
  {
    name: 'alpha chat',
    url: () => '/api/alpha/v1/chat/completions',
    body: (m) => ({ model: m, messages, max_tokens: 20 }),
  },
  {
    name: 'alpha chat stream',
    url: () => '/api/alpha/v1/chat/completions',
    body: (m) => ({ model: m, messages, stream: true }),
  },
  {
    name: 'alpha responses',
    url: () => '/api/alpha/v1/responses',
    body: (m) => ({ model: m, input: 'hello fuzz', stream: false }),
  },
  {
    name: 'alpha responses stream',
    url: () => '/api/alpha/v1/responses',
    body: (m) => ({ model: m, input: 'hello fuzz', stream: true }),
  },
  {
    name: 'alpha embeddings',
    embeds: true,
    url: () => '/api/alpha/v1/embeddings',
    body: (m) => ({ model: m, input: ['a', 'b c'], encoding_format: 'float' }),
  },
  { name: 'beta messages', url: () => '/api/beta/v1/messages', body: (m) => ({ model: m, max_tokens: 20, messages }) },
  {
    name: 'beta messages stream',
    url: () => '/api/beta/v1/messages',
    body: (m) => ({ model: m, max_tokens: 20, messages, stream: true }),
  },
  {
    name: 'beta embeddings',
    embeds: true,
    url: () => '/api/beta/v1/embeddings',
    body: (m) => ({ model: m, input: ['hello'], encoding_format: 'float' }),
  },
  {
    name: 'gamma generate',
    url: (m) => `/api/gamma/v1beta/models/${m}:generateContent`,
    body: () => ({
      contents: [{ role: 'user', parts: [{ text: 'hello fuzz' }] }],
      generationConfig: { maxOutputTokens: 20 },
    }),
  },
  {
    name: 'gamma stream',
    url: (m) => `/api/gamma/v1beta/models/${m}:streamGenerateContent?alt=sse`,
    body: () => ({ contents: 'hello fuzz' }),
  },
  {
    name: 'gamma embed',
    embeds: true,
    url: (m) => `/api/gamma/v1beta/models/${m}:embedContent`,
    body: () => ({ content: { parts: [{ text: 'hello' }] } }),
  },
  {
    name: 'gamma batch embed',
    embeds: true,
    url: (m) => `/api/gamma/v1beta/models/${m}:batchEmbedContents`,
    body: (m) => ({ requests: [{ model: `models/${m}`, content: { parts: [{ text: 'a' }] } }] }),
  },
  // Media jobs (sandbox models: stored, run and settled in the background).
  {
    name: 'native image job',
    url: () => '/api/v1/image/generations/async',
    body: () => ({ model: 'sandbox-image', content: [{ type: 'text', text: 'a fox' }] }),
  },
  {
    name: 'native video job',
    url: () => '/api/v1/video/generations',
    body: () => ({ model: 'sandbox-video', content: [{ type: 'text', text: 'a clip' }] }),
  },
  {
    name: 'alpha video job',
    url: () => '/api/alpha/v1/videos',
    body: () => ({ model: 'sandbox-video', prompt: 'a clip', seconds: 2, size: '720x1280' }),
  },
];

/** A JSON path into the body and the value put there; arrays and objects are made on the way as needed. */
const mutation = fc.tuple(
  fc.array(
    fc.constantFrom(
      'model',
      'messages',
      0,
      'content',
      'role',
      'max_tokens',
      'maxTokens',
      'stream',
      'input',
      'contents',
      'generationConfig',
      'maxOutputTokens',
      'parts',
      'text',
      'tools',
      'temperature',
      'n',
      'candidateCount',
      'dimensions',
      'provider',
      'stream_options',
    ),
    { minLength: 1, maxLength: 4 },
  ),
  evil,
);

function mutate(body: Record<string, unknown>, [path, value]: [Array<string | number>, unknown]): void {
  let target: Record<string | number, unknown> = body;
  for (const step of path.slice(0, -1)) {
    const child = target[step];
    if (child === null || typeof child !== 'object') target[step] = {};
    target = target[step] as Record<string | number, unknown>;
  }
  target[path.at(-1)!] = value;
}

/** The body as sent: the JSON of the mutated body, sometimes spliced with text JSON.parse turns into Infinity or a 5,000-deep nest. */
const payloadText = fc.constantFrom('as-is', 'infinite-number', 'deep-nest', 'truncated-json', 'not-an-object');

function render(body: Record<string, unknown>, form: string): string {
  const json = JSON.stringify(body);
  switch (form) {
    case 'infinite-number':
      return json.replace(/^\{/, '{"max_tokens":1e309,"maxTokens":-1e400,"temperature":1e999,');
    case 'deep-nest':
      return json.replace(/^\{/, `{"extra":${'['.repeat(5_000)}${']'.repeat(5_000)},`);
    case 'truncated-json':
      return json.slice(0, Math.max(1, Math.floor(json.length / 2)));
    case 'not-an-object':
      return JSON.stringify([body]);
    default:
      return json;
  }
}

// ---------------------------------------------------------------------------------------------------------------
// Invariants.

function checkAnswer(response: LightMyRequestResponse, behaviour: ChaosBehaviour, label: string): void {
  const status = response.statusCode;
  // An upstream's own error status is relayed as it came, a 500 included.
  const relayed = response.headers['x-upstream-status'] === String(status);
  expect(
    (status >= 200 && status < 300) || (status >= 400 && status < 500) || status === 502 || status === 503 || relayed,
    `${label}: status ${status} ${response.body.slice(0, 300)}`,
  ).toBe(true);
  if (status >= 400 && status < 500 && response.headers['x-gateway-error-code']) {
    const envelope = response.json<Record<string, unknown>>();
    expect(envelope, label).toMatchObject({ status, success: false });
    expect(
      Array.isArray(envelope.errors) && envelope.errors.every((message) => typeof message === 'string'),
      label,
    ).toBe(true);
    expect(typeof envelope.path === 'string' && typeof envelope.timestamp === 'number', label).toBe(true);
  }
  if (status === 200 && (behaviour === 'garbage' || behaviour === 'html')) {
    // Only the sandbox (which never calls the upstream) may answer 200 then.
    expect(response.body, `${label}: a broken upstream answer was relayed as a success`).not.toMatch(
      /not json at all|<html>/,
    );
  }
}

async function checkBooks(): Promise<void> {
  await gateway.settled();
  // Media jobs end (and settle their holds) in the background.
  const db0 = gateway.gateway.core.storage.db;
  for (let attempt = 0; attempt < 200; attempt++) {
    const [open] = await uncheckedRows<{ count: number }>(
      db0,
      sql`SELECT count(*)::int AS count FROM media_jobs WHERE state IN ('queued', 'processing')`,
    );
    if (open!.count === 0) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await gateway.settled();
  // Credit leased and unused goes back; a hold any request left behind would keep its lease open.
  await gateway.gateway.core.services.ledger.giveBackUnused();
  const db = gateway.gateway.core.storage.db;
  const [holds] = await uncheckedRows<{ count: number }>(db, sql`SELECT count(*)::int AS count FROM holds`);
  expect(holds!.count).toBe(0);
  const negative = await uncheckedRows<{ id: string }>(
    db,
    sql`SELECT id FROM accounts WHERE balance_nanos < 0 OR held_nanos <> 0`,
  );
  expect(negative).toEqual([]);
  const overCap = await uncheckedRows<{ id: string }>(
    db,
    sql`SELECT id FROM api_keys WHERE held_nanos <> 0 OR (total_limit_nanos IS NOT NULL AND spent_total_nanos > total_limit_nanos) OR (daily_limit_nanos IS NOT NULL AND spent_day_nanos > daily_limit_nanos)`,
  );
  expect(overCap).toEqual([]);
}

describe('generation routes against random bodies and an upstream that answers at random', () => {
  it('answers 2xx, 4xx, 502 or 503, never relays garbage as a success, and leaves the books whole', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...routes).chain((route) => fc.tuple(fc.constant(route), modelFor(route))),
        fc.constantFrom(...chaosBehaviours),
        fc.oneof({ weight: 3, arbitrary: fc.constant(0) }, { weight: 1, arbitrary: fc.nat({ max: keys.length - 1 }) }),
        fc.oneof(
          { weight: 3, arbitrary: fc.constant([] as Array<[Array<string | number>, unknown]>) },
          { weight: 1, arbitrary: fc.array(mutation, { minLength: 1, maxLength: 3 }) },
        ),
        fc.oneof({ weight: 4, arbitrary: fc.constant('as-is') }, { weight: 1, arbitrary: payloadText }),
        fc.option(poisonArb, { freq: 4 }),
        // biome-ignore lint/complexity/useMaxParams: fast-check passes one argument per arbitrary
        async ([route, modelId], behaviour, keyIndex, mutations, form, poison) => {
          let body = route.body(modelId);
          for (const change of mutations) mutate(body, change);
          if (poison) body = poisoned(body, poison);
          chaos.answerNextWith(behaviour);
          const response = await gateway.app.inject({
            method: 'POST',
            url: route.url(modelId),
            headers: { 'x-api-key': keys[keyIndex]!, 'content-type': 'application/json' },
            payload: render(body, form),
          });
          chaos.answerNextWith('valid');
          const label = `${route.name} ${modelId} ${behaviour} ${form}${poison ? ` poisoned ${JSON.stringify(poison)}` : ''}`;
          checkAnswer(response, behaviour, label);
          // (5) Refused at the edge, whatever else is wrong with the body.
          if (poison) expect(response.statusCode, `${label}: ${response.body.slice(0, 300)}`).toBe(400);
        },
      ),
      { numRuns: 100 * runScale, seed, interruptAfterTimeLimit: 60_000 * runScale },
    );
    await checkBooks();
    // Every exchange the gateway gave up on was hung up, not left open.
    for (let attempt = 0; attempt < 100 && chaos.openAnswers() > 0; attempt++)
      await new Promise((resolve) => setTimeout(resolve, 20));
    expect(chaos.openAnswers()).toBe(0);
  }, 180_000);
});
