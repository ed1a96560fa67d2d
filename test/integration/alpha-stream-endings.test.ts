import type { ServerResponse } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeServer, type FakeServer, type RecordedRequest } from '../fakes/fake-server.ts';
import { fakeOpenAiKey } from '../fakes/openai-fake.ts';
import { usageRecords } from '../support/http-helpers.ts';
import { fakeProviderYaml, modelYaml, startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * An OpenAI-protocol upstream that closes its streams cleanly before the answer is complete: chat chunks
 * without a finish, or Responses events without response.completed. A `[DONE]` after that would pass the
 * cut answer off as whole.
 */
function closesEarly(request: RecordedRequest, response: ServerResponse): void {
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (request.path === '/v1/chat/completions') {
    const chunk = (delta: object) => ({
      id: 'chatcmpl-1',
      object: 'chat.completion.chunk',
      created: 1,
      model: 'm',
      choices: [{ index: 0, delta, logprobs: null, finish_reason: null }],
    });
    response.write(`data: ${JSON.stringify(chunk({ role: 'assistant', content: '' }))}\n\n`);
    response.end(`data: ${JSON.stringify(chunk({ content: 'Half' }))}\n\n`);
    return;
  }
  const inProgress = {
    id: 'resp_1',
    object: 'response',
    created_at: 1,
    status: 'in_progress',
    model: 'm',
    output: [],
    usage: null,
  };
  response.write(
    `event: response.created\ndata: ${JSON.stringify({ type: 'response.created', sequence_number: 0, response: inProgress })}\n\n`,
  );
  response.end(
    `event: response.output_text.delta\ndata: ${JSON.stringify({ type: 'response.output_text.delta', sequence_number: 1, item_id: 'msg_1', output_index: 0, content_index: 0, delta: 'Half', logprobs: [] })}\n\n`,
  );
}

describe('alpha streams an upstream closed before its answer was complete', () => {
  let fake: FakeServer;
  let gateway: TestGateway;

  beforeAll(async () => {
    fake = await startFakeServer(closesEarly);
    gateway = await startTestGateway({
      upstreams: [fake],
      configText: [
        'providers:',
        fakeProviderYaml('early', 'openai', fake),
        'models:',
        modelYaml('early', { provider: 'early', upstream: 'm' }),
      ].join('\n'),
    });
  });
  afterAll(async () => {
    await gateway?.close();
  });

  const stream = async (url: string, payload: object) => {
    const { key } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url,
      headers: { 'x-api-key': key },
      payload: { model: 'early', stream: true, ...payload },
    });
    expect(fake.requests.at(-1)!.headers.authorization).toBe(`Bearer ${fakeOpenAiKey}`);
    expect(await usageRecords(gateway, key)).toMatchObject([{ status: 'failed' }]);
    return response.body.split('\n\n').filter(Boolean);
  };

  it('ends a chat stream with the error chunk, never [DONE]', async () => {
    const frames = await stream('/api/alpha/v1/chat/completions', { messages: [{ role: 'user', content: 'hi' }] });
    expect(frames).not.toContain('data: [DONE]');
    expect(JSON.parse(frames.at(-1)!.slice(6))).toEqual({
      error: { message: 'the upstream provider failed while streaming', type: 'upstream_error' },
    });
  });

  it('ends a responses stream with the error event numbered after the last relayed one, never [DONE]', async () => {
    const frames = await stream('/api/alpha/v1/responses', { input: 'hi' });
    expect(frames).not.toContain('data: [DONE]');
    expect(frames.at(-2)).toMatch(/^event: response.output_text.delta\n/);
    const last = frames.at(-1)!.split('\n');
    expect(last[0]).toBe('event: error');
    expect(JSON.parse(last[1]!.slice(6))).toEqual({
      type: 'error',
      code: 'upstream_error',
      message: 'the upstream provider failed while streaming',
      param: null,
      sequence_number: 2,
    });
  });
});
