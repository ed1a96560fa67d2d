import { describe, expect, it } from 'vitest';
import { usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';
import { modelYaml } from '../support/test-gateway.ts';

/**
 * Pass-through streams (the surface's own protocol upstream) whose upstream closes the connection mid-stream,
 * before the protocol's end: each fake's `fake-cut` model streams a first chunk in its real wire format, then
 * drops the connection. The client is told with its surface's in-stream error event, as a translated stream
 * tells it, never left with a stream that simply ends.
 */
describe('pass-through streams cut by their upstream', () => {
  const setup = useFamilyGateway({
    extraConfig: [
      modelYaml('cut-openai', { provider: 'openai', upstream: 'fake-cut' }),
      modelYaml('cut-anthropic', { provider: 'anthropic', upstream: 'fake-cut' }),
      modelYaml('cut-gemini', { provider: 'gemini', upstream: 'fake-cut' }),
    ],
  });

  /** The stream's frames (blank-line separated, CRLF or LF), after checking the request was relayed and failed. */
  const frames = async (url: string, payload: object) => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': key }, payload });
    expect(response.statusCode).toBe(200);
    expect(response.headers['content-type']).toMatch(/^text\/event-stream/);
    expect(await usageRecords(setup.gateway, key)).toMatchObject([{ status: 'failed' }]);
    return response.body
      .split(/\r?\n\r?\n/)
      .map((frame) => frame.trim())
      .filter((frame) => frame !== '');
  };

  it('alpha chat completions from an OpenAI upstream end with the error chunk, never [DONE]', async () => {
    const got = await frames('/api/alpha/v1/chat/completions', {
      model: 'cut-openai',
      stream: true,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(got[0]).toMatch(/^data: \{.*"chat\.completion\.chunk"/);
    expect(got).not.toContain('data: [DONE]');
    expect(JSON.parse(got.at(-1)!.slice('data: '.length))).toEqual({
      error: { message: 'the upstream provider failed while streaming', type: 'upstream_error' },
    });
  });

  it('beta messages from an Anthropic upstream end with the error event', async () => {
    const got = await frames('/api/beta/v1/messages', {
      model: 'cut-anthropic',
      stream: true,
      max_tokens: 64,
      messages: [{ role: 'user', content: 'one two three four' }],
    });
    expect(got[0]).toMatch(/^event: message_start\n/);
    expect(got.some((frame) => frame.startsWith('event: message_stop'))).toBe(false);
    const last = got.at(-1)!.split('\n');
    expect(last[0]).toBe('event: error');
    expect(JSON.parse(last[1]!.slice('data: '.length))).toEqual({
      type: 'error',
      error: { type: 'api_error', message: 'the upstream provider failed while streaming' },
    });
  });

  it('gamma streamGenerateContent from a Gemini upstream ends with the error chunk', async () => {
    const got = await frames('/api/gamma/v1beta/models/cut-gemini:streamGenerateContent?alt=sse', {
      contents: [{ role: 'user', parts: [{ text: 'one two three four' }] }],
    });
    expect(JSON.parse(got[0]!.slice('data: '.length))).toMatchObject({ candidates: [{ content: { role: 'model' } }] });
    expect(JSON.parse(got.at(-1)!.slice('data: '.length))).toEqual({
      error: { code: 502, message: 'the upstream provider failed while streaming', status: 'UNAVAILABLE' },
    });
  });

  it('gamma streamGenerateContent without alt ends its JSON array with the error element, and closes it', async () => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/cut-gemini:streamGenerateContent',
      headers: { 'x-api-key': key },
      payload: { contents: [{ role: 'user', parts: [{ text: 'one two three four' }] }] },
    });
    expect(response.statusCode).toBe(200);
    const elements: unknown[] = JSON.parse(response.body);
    expect(elements[0]).toMatchObject({ candidates: [{ content: { role: 'model' } }] });
    expect(elements.at(-1)).toEqual({
      error: { code: 502, message: 'the upstream provider failed while streaming', status: 'UNAVAILABLE' },
    });
    expect(await usageRecords(setup.gateway, key)).toMatchObject([{ status: 'failed' }]);
  });
});
