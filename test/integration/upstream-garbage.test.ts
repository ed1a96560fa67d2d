import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { garbageKinds, startGarbageFake, type GarbageKind } from '../fakes/garbage-fake.ts';
import { expectEnvelope, heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Upstreams that answer 200 with something their protocol does not allow (not JSON, an HTML page, JSON of
 * another shape, a stream whose first or third event is garbage, or whose second comes with its first), on
 * every surface, relayed to an upstream of the surface's own protocol and translated to another: a 502
 * envelope or the next provider row while nothing has been sent, a failure inside the stream once it has
 * begun; never a success, never a hold left.
 */
const families = ['openai', 'anthropic', 'gemini'] as const;
type Family = (typeof families)[number];
const wholeKinds: GarbageKind[] = ['not-json', 'html', 'shape'];
const streamKinds: GarbageKind[] = ['not-json', 'html', 'shape', 'first-event'];
// A relayed stream's meter reads every event of the first bytes before the answer begins; a translated one
// begins with the first event it decodes, as with garbage that comes later.
const relayedStreamKinds: GarbageKind[] = [...streamKinds, 'second-event', 'second-event-later'];
// Answers that break after they began: garbage after two events, or the connection cut. Asked for whole (not
// streamed), nothing of such an answer has reached the client when it breaks.
const brokenLater: GarbageKind[] = ['third-event', 'cut'];

const model = (id: string, ...rows: string[]) =>
  `  - id: ${id}\n    pricing: { inputPerMTok: 1, outputPerMTok: 2 }\n    providers:\n${rows.map((row, index) => `      - { ${row}, priority: ${index + 1} }`).join('\n')}\n`;
const embedModel = (id: string, provider: string, kind: GarbageKind) =>
  `  - id: ${id}\n    outputModalities: [embedding]\n    pricing: { inputPerMTok: 1 }\n    providers: [{ provider: ${provider}, model: garbage-${kind} }]\n`;

type Surface = 'alpha' | 'responses' | 'beta' | 'gamma' | 'gamma-sse';
const surfaceProtocol: Record<Surface, Family> = {
  alpha: 'openai',
  responses: 'openai',
  beta: 'anthropic',
  gamma: 'gemini',
  'gamma-sse': 'gemini',
};

function call(surface: Surface, modelId: string, stream: boolean): { url: string; payload: object } {
  switch (surface) {
    case 'alpha':
      return {
        url: '/api/alpha/v1/chat/completions',
        payload: { model: modelId, stream, messages: [{ role: 'user', content: 'hi' }] },
      };
    case 'responses':
      return { url: '/api/alpha/v1/responses', payload: { model: modelId, stream, input: 'hi' } };
    case 'beta':
      return {
        url: '/api/beta/v1/messages',
        payload: { model: modelId, stream, max_tokens: 50, messages: [{ role: 'user', content: 'hi' }] },
      };
    case 'gamma':
    case 'gamma-sse': {
      const action = stream ? `streamGenerateContent${surface === 'gamma-sse' ? '?alt=sse' : ''}` : 'generateContent';
      return {
        url: `/api/gamma/v1beta/models/${modelId}:${action}`,
        payload: { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      };
    }
  }
}

describe('upstream answers that break their protocol', () => {
  let fake: Awaited<ReturnType<typeof startGarbageFake>>;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startGarbageFake();
    // Every kind but the endless stream, which has a model of its own below.
    const kinds = garbageKinds.filter((kind) => kind !== 'endless');
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        ...families.map((family) => fakeProviderYaml(family, family, fake)),
        fakeProviderYaml('ark', 'ark', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        ...families.flatMap((family) =>
          kinds.map((kind) => model(`${family}-${kind}`, `provider: ${family}, model: garbage-${kind}`)),
        ),
        ...families.map((family) =>
          model(
            `${family}-then-sandbox`,
            `provider: ${family}, model: garbage-not-json`,
            'provider: sandbox, model: echo',
          ),
        ),
        ...families.flatMap((family) =>
          brokenLater.map((kind) =>
            model(
              `${family}-${kind}-then-sandbox`,
              `provider: ${family}, model: garbage-${kind}`,
              'provider: sandbox, model: echo',
            ),
          ),
        ),
        model('sandbox-only', 'provider: sandbox, model: echo'),
        model('openai-endless', 'provider: openai, model: garbage-endless'),
        embedModel('openai-embed', 'openai', 'shape'),
        embedModel('openai-embed-html', 'openai', 'html'),
        embedModel('gemini-embed', 'gemini', 'shape'),
        embedModel('ark-embed', 'ark', 'not-json'),
        // Every call here breaks its protocol on purpose: the rows' breakers would open and turn the 502s under
        // test into 503s (that behaviour has its own test, provider-resilience).
        'upstream: { breakerFailures: 1000 }',
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function funded() {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const send = (url: string, payload: object) =>
      gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    const balance = async () =>
      (await gateway.request({ method: 'GET', url: '/api/compat/v1/balance', headers: { 'x-api-key': key } })).json<{
        creditBalance: number;
      }>().creditBalance;
    return { key, accountId, send, balance };
  }

  const surfaces: Surface[] = ['alpha', 'responses', 'beta', 'gamma', 'gamma-sse'];

  for (const surface of surfaces) {
    for (const family of families) {
      const how = surfaceProtocol[surface] === family ? 'relayed' : 'translated';
      it(`${surface} -> ${family} (${how}): a 502 envelope for every answer that does not parse, nothing held or charged`, async () => {
        const { key, accountId, send, balance } = await funded();
        const cases = [
          ...(surface === 'gamma-sse' ? [] : wholeKinds.map((kind) => ({ kind, stream: false }))),
          ...(how === 'relayed' ? relayedStreamKinds : streamKinds).map((kind) => ({ kind, stream: true })),
        ];
        for (const { kind, stream } of cases) {
          const { url, payload } = call(surface, `${family}-${kind}`, stream);
          const response = await send(url, payload);
          expectEnvelope(response, { status: 502, code: 'GW_UPSTREAM_UNREACHABLE', path: url.split('?')[0]! });
        }
        expect(await balance()).toBe(1);
        expect(await heldNanosOf(gateway, accountId)).toBe(0n);
        const records = await usageRecords(gateway, key);
        expect(records).toHaveLength(cases.length);
        expect(records.every((record) => record.status === 'failed' && record.usdCost === 0)).toBe(true);
      });

      it(`${surface} -> ${family} (${how}): an answer that does not parse falls back to the next row`, async () => {
        const { key, accountId, send } = await funded();
        for (const stream of surface === 'gamma-sse' ? [true] : [false, true]) {
          const { url, payload } = call(surface, `${family}-then-sandbox`, stream);
          const response = await send(url, payload);
          expect(response.statusCode, response.body).toBe(200);
          expect(response.body).toContain('hi');
        }
        expect(await heldNanosOf(gateway, accountId)).toBe(0n);
        expect((await usageRecords(gateway, key)).every((record) => record.status === 'succeeded')).toBe(true);
      });

      if (surface !== 'gamma-sse') {
        it(`${surface} -> ${family} (${how}): a whole answer whose upstream breaks after it began is a 502 envelope, charged nothing`, async () => {
          const { key, accountId, send, balance } = await funded();
          for (const kind of brokenLater) {
            const { url, payload } = call(surface, `${family}-${kind}`, false);
            expectEnvelope(await send(url, payload), { status: 502, code: 'GW_UPSTREAM_UNREACHABLE', path: url });
          }
          expect(await balance()).toBe(1);
          expect(await heldNanosOf(gateway, accountId)).toBe(0n);
          const records = await usageRecords(gateway, key);
          expect(records.map((record) => [record.status, record.usdCost])).toEqual(
            brokenLater.map(() => ['failed', 0]),
          );
        });

        it(`${surface} -> ${family} (${how}): a whole answer whose upstream breaks after it began falls back to the next row, which alone is charged`, async () => {
          const { key, accountId, send, balance } = await funded();
          const alone = call(surface, 'sandbox-only', false);
          expect((await send(alone.url, alone.payload)).statusCode).toBe(200);
          const sandboxCost = (await usageRecords(gateway, key))[0]!.usdCost;
          expect(sandboxCost).toBeGreaterThan(0);
          for (const kind of brokenLater) {
            const { url, payload } = call(surface, `${family}-${kind}-then-sandbox`, false);
            const response = await send(url, payload);
            expect(response.statusCode, response.body).toBe(200);
            expect(response.body).toContain('hi');
            expect(response.body).not.toContain('Hello');
          }
          const records = await usageRecords(gateway, key);
          // The sandbox's answer alone, and after each broken row the same: nothing of the broken rows is charged.
          const calls = 1 + brokenLater.length;
          expect(records.map((record) => [record.status, record.usdCost])).toEqual(
            Array.from({ length: calls }, () => ['succeeded', sandboxCost]),
          );
          expect(await balance()).toBeCloseTo(1 - calls * sandboxCost, 9);
          expect(await heldNanosOf(gateway, accountId)).toBe(0n);
        });
      }

      it(`${surface} -> ${family} (${how}): garbage after the stream began ends it as a failure`, async () => {
        const { key, accountId, send, balance } = await funded();
        const { url, payload } = call(surface, `${family}-third-event`, true);
        const response = await send(url, payload);
        expect(response.statusCode, response.body).toBe(200);
        // A JSON array relayed as it came ends with the error element before the garbage, and is closed.
        if (surface === 'gamma' && how === 'relayed')
          expect(JSON.parse(response.body).at(-1)).toMatchObject({ error: { code: 502, status: 'UNAVAILABLE' } });
        expect(response.body).toContain('Hello');
        expect(response.body).not.toContain('<html>');
        expect(response.body).not.toContain('[DONE]');
        if (surface === 'alpha') expect(response.body).toContain('"type":"upstream_error"');
        const [record] = await usageRecords(gateway, key);
        expect(record!.status).toBe('failed');
        expect(await heldNanosOf(gateway, accountId)).toBe(0n);
        expect(await balance()).toBeLessThanOrEqual(1);
      });
    }
  }

  it('lets go of an upstream that keeps streaming after garbage, instead of holding its connection', async () => {
    const { key, accountId, send } = await funded();
    const before = fake.streamsLetGo();
    const response = await send('/api/alpha/v1/chat/completions', {
      model: 'openai-endless',
      stream: true,
      messages: [{ role: 'user', content: 'hi' }],
    });
    expect(response.statusCode).toBe(200);
    expect(response.body).toContain('"type":"upstream_error"');
    await vi.waitFor(() => expect(fake.streamsLetGo()).toBe(before + 1), { timeout: 10_000 });
    expect((await usageRecords(gateway, key))[0]!.status).toBe('failed');
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
  });

  it('embeddings on every surface: a 502 envelope for an answer that does not parse, nothing held or charged', async () => {
    const { key, accountId, send, balance } = await funded();
    const calls = [
      { url: '/api/alpha/v1/embeddings', payload: { model: 'openai-embed', input: 'hi' } },
      { url: '/api/alpha/v1/embeddings', payload: { model: 'openai-embed-html', input: 'hi' } },
      { url: '/api/beta/v1/embeddings', payload: { model: 'ark-embed', input: 'hi' } },
      { url: '/api/beta/v1/embeddings', payload: { model: 'gemini-embed', input: 'hi' } },
      { url: '/api/gamma/v1beta/models/openai-embed:embedContent', payload: { content: { parts: [{ text: 'hi' }] } } },
      {
        url: '/api/gamma/v1beta/models/gemini-embed:batchEmbedContents',
        payload: { requests: [{ content: { parts: [{ text: 'hi' }] } }] },
      },
    ];
    for (const { url, payload } of calls)
      expectEnvelope(await send(url, payload), { status: 502, code: 'GW_UPSTREAM_UNREACHABLE', path: url });
    expect(await balance()).toBe(1);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect((await usageRecords(gateway, key)).every((record) => record.usdCost === 0)).toBe(true);
  });
});
