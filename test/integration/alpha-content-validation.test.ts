import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startOpenAiFake } from '../fakes/openai-fake.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * The alpha request schemas describe content (parts, tool calls, tools, tool choice, answer formats, input
 * items): a known kind that breaks its shape answers 400 naming the field as the client spelled it, and only
 * that; a kind the schemas do not name, and any unnamed field, still reaches a same-protocol upstream as given.
 */
describe('alpha request content', () => {
  let fake: FakeServer;
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    fake = await startOpenAiFake();
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('fake', 'openai', fake),
        '  sandbox: { protocol: sandbox }',
        'models:',
        modelYaml('relayed', { provider: 'fake', upstream: 'gpt-4o-mini' }),
        modelYaml('echo', { provider: 'sandbox', upstream: 'echo' }),
      ].join('\n'),
    });
    ({ key } = await gateway.createFundedKey({ credits: 1 }));
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const post = (endpoint: string, payload: object) =>
    gateway.request({ method: 'POST', url: `/api/alpha/v1/${endpoint}`, headers: { 'x-api-key': key }, payload });

  // Each broken kind's message is claimed in test/unit/request-body-schemas.test.ts; here, one per route, the
  // 400 that carries it.
  it('answers a broken known kind with the one field that broke it, in the envelope of each route', async () => {
    const cases: Array<[string, object, string]> = [
      [
        'chat/completions',
        { messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] },
        'body.messages.0.content.0.text must be string',
      ],
      ['responses', { input: [{ content: 'x' }] }, "body.input.0 must have required property 'role'"],
    ];
    for (const [endpoint, body, message] of cases) {
      const response = await post(endpoint, { model: 'echo', ...body });
      expect(response.statusCode, JSON.stringify(body)).toBe(400);
      expect(response.json(), JSON.stringify(body)).toMatchObject({ errors: [message], error: { message } });
    }
  });

  it('relays kinds it does not name and unnamed fields as given, and refuses them only where translated', async () => {
    const part = { type: 'input_video', video_url: 'https://example.com/v.mp4' };
    const tool = { type: 'custom', custom: { name: 'grammar' } };
    const body = {
      messages: [{ role: 'user', content: [{ type: 'text', text: 'hi', cache_control: {} }, part], extra: 1 }],
      tools: [tool],
      response_format: { type: 'grammar', grammar: 'x' },
      prompt_cache_key: 'k',
    };
    const relayed = await post('chat/completions', { model: 'relayed', ...body });
    expect(relayed.statusCode, relayed.body).toBe(200);
    expect(fake.requests.at(-1)!.body).toMatchObject({ ...body, model: 'gpt-4o-mini' });
    const translated = await post('chat/completions', { model: 'echo', ...body });
    expect(translated.json<{ errors: string[] }>().errors).toEqual([
      'model "echo" cannot take "input_video" content parts through this surface',
    ]);
    const input = [
      { type: 'reasoning', summary: [] },
      { role: 'user', content: 'hi' },
    ];
    const responses = await post('responses', { model: 'relayed', input });
    expect(responses.statusCode, responses.body).toBe(200);
    expect(fake.requests.at(-1)!.body).toMatchObject({ input });
  });
});
