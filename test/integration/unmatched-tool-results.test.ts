import { describe, expect, it } from 'vitest';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { expectEnvelope, keyHeaders, usageRecords } from '../support/http-helpers.ts';

/**
 * A tool result whose call the conversation does not hold has no function name, and Gemini answers a call by
 * its name (`functionResponse.name` is required): translated to it, such a request is refused with 400 naming
 * the field, on each surface that sends results by call id, before anything is sent or charged.
 */
describe('tool results without their call, translated to Gemini', () => {
  const setup = useFamilyGateway();
  const question = { role: 'user', content: 'weather in Paris' };
  const lookup = { type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } };

  const cases = [
    {
      surface: 'beta messages',
      url: '/api/beta/v1/messages',
      field: 'body.messages[1].content[0].tool_use_id',
      payload: {
        max_tokens: 64,
        messages: [
          question,
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_x', content: 'sunny' }] },
        ],
      },
    },
    {
      surface: 'alpha chat completions',
      url: '/api/alpha/v1/chat/completions',
      field: 'body.messages[1].tool_call_id',
      payload: {
        messages: [question, { role: 'tool', tool_call_id: 'call_x', content: 'sunny' }],
        tools: [{ type: 'function', function: { name: 'lookup', parameters: lookup.parameters } }],
      },
    },
    {
      surface: 'alpha responses',
      url: '/api/alpha/v1/responses',
      field: 'body.input[1].call_id',
      payload: {
        input: [question, { type: 'function_call_output', call_id: 'call_x', output: 'sunny' }],
        tools: [lookup],
      },
    },
  ];

  for (const { surface, url, field, payload } of cases) {
    it(`${surface}: 400 naming ${field}, nothing sent to Gemini or charged`, async () => {
      const { key } = await setup.gateway.createFundedKey({ credits: 1 });
      const before = setup.gateway.fakes.gemini.requests.length;
      const response = await setup.gateway.request({
        method: 'POST',
        url,
        headers: keyHeaders(key),
        payload: { ...payload, model: 'via-gemini' },
      });
      const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url });
      expect(body.errors).toEqual([
        `${field} names no tool call of an earlier turn of the conversation, and model "via-gemini" answers a tool call by its function's name: send the call with its result`,
      ]);
      expect(setup.gateway.fakes.gemini.requests.length).toBe(before);
      expect(await usageRecords(setup.gateway, key)).toEqual([]);
    });
  }

  it('a result answering the call before it reaches Gemini named by that call', async () => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: keyHeaders(key),
      payload: {
        model: 'via-gemini',
        max_tokens: 64,
        messages: [
          { role: 'user', content: 'weather in Paris' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'lookup', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'sunny' }] },
        ],
      },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(JSON.stringify(setup.gateway.fakes.gemini.requests.at(-1)?.body)).toContain(
      '"functionResponse":{"name":"lookup"',
    );
  });

  it('translated to a protocol that answers a call by its id, the result is sent and the upstream decides', async () => {
    const before = setup.gateway.fakes.openai.requests.length;
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/beta/v1/messages',
      headers: keyHeaders(key),
      payload: { ...cases[0]!.payload, model: 'via-openai' },
    });
    expect(response.headers['x-gateway-error-code'], response.body).toBeUndefined();
    expect(setup.gateway.fakes.openai.requests.length).toBe(before + 1);
  });
});
