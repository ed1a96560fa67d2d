import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { keyHeaders } from '../support/http-helpers.ts';
import { startTestGateway, type TestGateway } from '../support/test-gateway.ts';

/**
 * Details of the compatibility surfaces a client of the imitated protocol relies on, against the shipped
 * configuration's sandbox models.
 */
describe('compatibility surface fidelity', () => {
  let gateway: TestGateway;
  let key: string;

  beforeAll(async () => {
    gateway = await startTestGateway();
    key = (await gateway.createFundedKey({ credits: 1 })).key;
  });
  afterAll(async () => gateway?.close());

  const post = (url: string, payload: object, headers: Record<string, string> = keyHeaders(key)) =>
    gateway.request({ method: 'POST', url, payload, headers });
  const errorsOf = (response: { json: <T>() => T }) => response.json<{ errors: string[] }>().errors;
  const messages = [{ role: 'user', content: 'alpha beta gamma' }];

  it('names refused parameters as the client spelled them on each surface', async () => {
    const alpha = await post('/api/alpha/v1/chat/completions', {
      model: 'sandbox-echo',
      messages,
      frequency_penalty: 0.5,
    });
    expect(alpha.statusCode).toBe(400);
    expect(errorsOf(alpha)).toEqual(['model "sandbox-echo" does not support parameter "frequency_penalty"']);
    const beta = await post('/api/beta/v1/messages', { model: 'sandbox-echo', max_tokens: 10, messages, top_k: 5 });
    expect(errorsOf(beta)).toEqual(['model "sandbox-echo" does not support parameter "top_k"']);
    const gamma = await post('/api/gamma/v1beta/models/sandbox-echo:generateContent', {
      contents: 'hi',
      generationConfig: { topK: 5 },
    });
    expect(errorsOf(gamma)).toEqual(['model "sandbox-echo" does not support parameter "generationConfig.topK"']);
    const video = await post('/api/alpha/v1/videos', { model: 'sandbox-video', prompt: 'a cat', size: '1792x1024' });
    expect(video.statusCode).toBe(400);
    expect(errorsOf(video)).toEqual(['parameter "size" of model "sandbox-video" must be one of 480p, 720p']);
  });

  it('lists the allowed values of an enumeration once', async () => {
    const refused = await post('/api/v1/image/estimate', {
      model: 'sandbox-image',
      content: [{ type: 'text', text: 'a cat' }],
      outputFormat: 'gif',
    });
    expect(refused.statusCode).toBe(400);
    expect(errorsOf(refused)).toEqual(['body.outputFormat must be one of: png, jpeg, webp']);
  });
});
