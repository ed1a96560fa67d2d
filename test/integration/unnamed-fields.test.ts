import { describe, expect, it } from 'vitest';
import type { FakeServer } from '../fakes/fake-server.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * Fields a surface's schema does not name (and metadata, which no other protocol takes as written) are carried
 * as sent to an upstream of the surface's own protocol; a request translated to another protocol goes without
 * them and names them in `x-gateway-dropped-parameters`, never losing them silently.
 */
describe('request fields the canonical request has no place for', () => {
  const setup = useFamilyGateway({ credits: 5 });

  const post = async (url: string, payload: object) => {
    const response = await setup.gateway.request({ method: 'POST', url, headers: { 'x-api-key': setup.key }, payload });
    expect(response.statusCode, response.body).toBe(200);
    return response.headers['x-gateway-dropped-parameters'];
  };
  const lastBody = (fake: FakeServer) => JSON.stringify(fake.requests.at(-1)?.body);
  const messages = [{ role: 'user', content: 'hi' }];

  it('alpha chat: carried to OpenAI, named when translated to Anthropic', async () => {
    const extra = { user: 'user-123', metadata: { tag: 'x' }, service_tier: 'flex' };
    expect(await post('/api/alpha/v1/chat/completions', { model: 'via-openai', messages, ...extra })).toBeUndefined();
    expect(setup.gateway.fakes.openai.requests.at(-1)?.body).toMatchObject(extra);
    const dropped = await post('/api/alpha/v1/chat/completions', { model: 'via-anthropic', messages, ...extra });
    expect(dropped).toBe('user,metadata,service_tier');
    expect(lastBody(setup.gateway.fakes.anthropic)).not.toContain('user-123');
  });

  it('names fields whatever characters they hold, each percent-encoded where a header could not carry it', async () => {
    const odd = { 'bad\r\nX-Injected: 1': 1, 名前: 2, 'a,b': 3, plain_field: 4 };
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': setup.key, 'content-type': 'application/json' },
      payload: JSON.stringify({ model: 'via-anthropic', messages, ...odd }),
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-injected']).toBeUndefined();
    expect(response.headers['x-gateway-dropped-parameters']).toBe(
      'bad%0D%0AX-Injected%3A%201,%E5%90%8D%E5%89%8D,a%2Cb,plain_field',
    );
  });

  it('refuses a request with more top-level fields its protocol does not describe than a header can name', async () => {
    const many = Object.fromEntries(Array.from({ length: 65 }, (_, index) => [`unknown_${index}`, index]));
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': setup.key },
      payload: { model: 'via-openai', messages, ...many },
    });
    expect(response.statusCode, response.body).toBe(400);
    expect(response.body).toContain('65 top-level fields the protocol does not describe (at most 64)');
    const enough = Object.fromEntries(Object.entries(many).slice(0, 64));
    expect(await post('/api/alpha/v1/chat/completions', { model: 'via-anthropic', messages, ...enough })).toMatch(
      /^unknown_0,.*,unknown_63$/,
    );
  });

  it('alpha responses: metadata and unnamed fields named when translated to Anthropic', async () => {
    const dropped = await post('/api/alpha/v1/responses', {
      model: 'via-anthropic',
      input: 'hi',
      metadata: { tag: 'x' },
      safety_identifier: 'user-123',
    });
    expect(dropped).toBe('safety_identifier,metadata');
  });

  it('beta messages: carried to Anthropic, named when translated to Gemini', async () => {
    const payload = {
      model: 'via-gemini',
      max_tokens: 20,
      messages,
      metadata: { user_id: 'user-123' },
      service_tier: 'standard_only',
    };
    expect(await post('/api/beta/v1/messages', payload)).toBe('service_tier,metadata');
    expect(lastBody(setup.gateway.fakes.gemini)).not.toContain('user-123');
    expect(await post('/api/beta/v1/messages', { ...payload, model: 'via-anthropic' })).toBeUndefined();
    expect(setup.gateway.fakes.anthropic.requests.at(-1)?.body).toMatchObject({
      metadata: { user_id: 'user-123' },
      service_tier: 'standard_only',
    });
  });

  it('gamma generateContent: carried to Gemini, named when translated to OpenAI', async () => {
    const payload = { contents: [{ role: 'user', parts: [{ text: 'hi' }] }], labels: { team: 'search' } };
    expect(await post('/api/gamma/v1beta/models/via-openai:generateContent', payload)).toBe('labels');
    expect(lastBody(setup.gateway.fakes.openai)).not.toContain('search');
    expect(await post('/api/gamma/v1beta/models/via-gemini:generateContent', payload)).toBeUndefined();
    expect(setup.gateway.fakes.gemini.requests.at(-1)?.body).toMatchObject({ labels: { team: 'search' } });
  });
});
