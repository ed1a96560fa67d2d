import Anthropic from '@anthropic-ai/sdk';
import { betaZodTool } from '@anthropic-ai/sdk/helpers/beta/zod';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { expectEnvelope, keyHeaders, usageRecords } from '../support/http-helpers.ts';

/**
 * Message threads (`thread`): the server holds the conversation and a `continue` sends only the new turn. The
 * gateway holds none, so a model another protocol serves refuses a thread with the code on which Anthropic's SDK
 * sends the turn again unthreaded, with the whole conversation; an Anthropic row takes it as given.
 */
describe('beta message threads', () => {
  const setup = useFamilyGateway({
    credits: 1,
    listen: true,
    // Two rows of two protocols: a threaded request goes to the Anthropic one only.
    extraConfig: [
      [
        '  - id: openai-then-anthropic',
        '    pricing: { inputPerMTok: 1, outputPerMTok: 2 }',
        '    providers:',
        '      - { provider: openai, model: gpt-4o-mini }',
        '      - { provider: anthropic, model: claude-sonnet-4-5-20250929 }',
      ].join('\n'),
    ],
  });
  const question = 'lookup weather in Paris';
  const betaHeaders = () => ({ ...keyHeaders(setup.key), 'anthropic-version': '2023-06-01' });
  const threadContinue = { type: 'continue', previous_message_id: 'msg_0123' };
  const unsupportedThread = { error_code: 'thread_unsupported_request', unsupported: ['thread'] };
  const upstreamRequests = () => {
    const { openai, anthropic, gemini } = setup.gateway.fakes;
    return openai.requests.length + anthropic.requests.length + gemini.requests.length;
  };

  for (const model of ['via-openai', 'via-gemini']) {
    it(`${model}: the SDK's default tool runner (threaded) goes on unthreaded and keeps the conversation`, async () => {
      const fake = model === 'via-openai' ? setup.gateway.fakes.openai : setup.gateway.fakes.gemini;
      const before = fake.requests.length;
      const client = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
      const runner = client.beta.messages.toolRunner({
        model,
        max_tokens: 256,
        max_iterations: 4,
        messages: [{ role: 'user', content: question }],
        tools: [
          betaZodTool({
            name: 'lookup',
            description: 'weather',
            inputSchema: z.object({ query: z.string() }),
            run: async () => 'sunny',
          }),
        ],
      });
      for await (const _turn of runner) {
        // each turn: the runner calls the tool and sends its result
      }
      const final = await runner.done();
      // The fakes echo the tool's output (Gemini's as its functionResponse object).
      expect(final.content).toEqual([{ type: 'text', text: expect.stringContaining('sunny') }]);
      // Two turns reached the upstream, each with the whole conversation: the question and, then, the result.
      const sent = fake.requests.slice(before).map((request) => JSON.stringify(request.body));
      expect(sent).toHaveLength(2);
      for (const body of sent) expect(body).toContain(question);
      expect(sent[1]).toContain('sunny');
    });

    for (const stream of [false, true])
      it(`${model}: a request with \`thread\` answers 400 thread_unsupported_request${stream ? ', streamed before any event' : ''}, nothing sent or charged`, async () => {
        const { key } = await setup.gateway.createFundedKey({ credits: 1 });
        const before = upstreamRequests();
        const response = await setup.gateway.request({
          method: 'POST',
          url: '/api/beta/v1/messages?beta=true',
          headers: { ...betaHeaders(), 'x-api-key': key },
          payload: {
            model,
            max_tokens: 64,
            stream,
            messages: [{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'sunny' }] }],
            thread: threadContinue,
          },
        });
        const body = expectEnvelope(response, {
          status: 400,
          code: 'GW_VALIDATION',
          path: '/api/beta/v1/messages',
          sdkDetails: unsupportedThread,
        });
        expect(body.errors).toEqual([
          `model "${model}" cannot take message threads (\`thread\`: send the whole conversation without it) through this surface`,
        ]);
        expect(response.headers['x-gateway-dropped-parameters']).toBeUndefined();
        expect(upstreamRequests()).toBe(before);
        expect(await usageRecords(setup.gateway, key)).toEqual([]);
      });
  }

  it('via-anthropic: `thread` is relayed as given', async () => {
    const before = setup.gateway.fakes.anthropic.requests.length;
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: betaHeaders(),
      payload: {
        model: 'via-anthropic',
        max_tokens: 64,
        messages: [{ role: 'user', content: 'hi' }],
        thread: { type: 'create' },
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    const [sent] = setup.gateway.fakes.anthropic.requests.slice(before);
    expect(sent?.body).toMatchObject({ thread: { type: 'create' } });
  });

  it('a model with rows of both protocols serves a threaded request from its Anthropic row alone', async () => {
    const before = {
      openai: setup.gateway.fakes.openai.requests.length,
      anthropic: setup.gateway.fakes.anthropic.requests.length,
    };
    const payload = { model: 'openai-then-anthropic', max_tokens: 64, messages: [{ role: 'user', content: 'hi' }] };
    const threaded = await setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: betaHeaders(),
      payload: { ...payload, thread: { type: 'create' } },
    });
    expect(threaded.statusCode, threaded.body).toBe(200);
    expect(setup.gateway.fakes.openai.requests.length).toBe(before.openai);
    expect(setup.gateway.fakes.anthropic.requests.slice(before.anthropic).map((request) => request.body)).toEqual([
      expect.objectContaining({ thread: { type: 'create' } }),
    ]);
    // Without a thread, the first row serves as ever.
    const plain = await setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: betaHeaders(),
      payload,
    });
    expect(plain.statusCode, plain.body).toBe(200);
    expect(setup.gateway.fakes.openai.requests.length).toBe(before.openai + 1);
  });
});
