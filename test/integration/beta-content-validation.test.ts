import { describe, expect, it } from 'vitest';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * The beta surface checks message content, tools, tool choice, thinking and answer formats against the
 * protocol's schemas: a wrong field answers 400 naming it as the client spelled it, while block and tool types
 * the gateway does not know (newer ones, the provider's server tools) pass on to an upstream of the protocol.
 */
describe('beta messages content schemas', () => {
  const setup = useFamilyGateway({ credits: 10 });

  const send = (fields: Record<string, unknown>, model = 'via-anthropic') =>
    setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: { 'x-api-key': setup.key, 'anthropic-version': '2023-06-01' },
      payload: { model, max_tokens: 50, messages: [{ role: 'user', content: 'hello there' }], ...fields },
    });
  const lastRequest = () => setup.gateway.fakes.anthropic.requests.at(-1)?.body;

  // Each refused field's message is claimed in test/unit/request-body-schemas.test.ts; here, the error body that
  // carries one.
  it('refuses a text block without text with a 400 naming the field, in the beta error body', async () => {
    const answer = await send({ messages: [{ role: 'user', content: [{ type: 'text' }] }] });
    expect(answer.statusCode, answer.body).toBe(400);
    const body = answer.json<{ type: string; error: { type: string; message: string } }>();
    expect(body.type).toBe('error');
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toBe("body.messages.0.content.0 must have required property 'text'");
  });

  it('passes blocks, sources and tools of types it does not know on to an Anthropic upstream, extra fields and all', async () => {
    const content = [
      { type: 'text', text: 'hello there', cache_control: { type: 'ephemeral' } },
      { type: 'search_result', source: 'https://example.com', title: 'T', content: [{ type: 'text', text: 'x' }] },
      { type: 'image', source: { type: 'file', file_id: 'file_1' } },
    ];
    const tools = [
      { name: 'lookup', input_schema: { type: 'object', additionalProperties: false }, strict: true },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
    ];
    const fields = {
      messages: [{ role: 'user', content }],
      tools,
      tool_choice: { type: 'auto', disable_parallel_tool_use: true },
      thinking: { type: 'adaptive' },
      metadata: { user_id: 'u1' },
      service_tier: 'auto',
    };
    const answer = await send(fields);
    expect(answer.statusCode, answer.body).toBe(200);
    expect(lastRequest()).toMatchObject(fields);
  });

  it('names blocks another protocol cannot take, translating what it can', async () => {
    const answer = await send(
      { messages: [{ role: 'user', content: [{ type: 'image', source: { type: 'file', file_id: 'file_1' } }] }] },
      'via-openai',
    );
    expect(answer.statusCode, answer.body).toBe(400);
    expect(answer.json<{ error: { message: string } }>().error.message).toMatch(/"image" content blocks/);
    const translated = await send(
      {
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'hi' }] },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'hm', signature: 's' },
              { type: 'text', text: 'yes' },
            ],
          },
          { role: 'user', content: 'more' },
        ],
      },
      'via-openai',
    );
    expect(translated.statusCode, translated.body).toBe(200);
  });
});
