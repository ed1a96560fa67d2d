import { describe, expect, it } from 'vitest';
import { heldNanosOf } from '../support/http-helpers.ts';
import { pngBase64 } from '../support/media-fixtures.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/** A catalog entry that takes `inputs` (text and images unless told), priced at 1 and 2 USD per million tokens. */
const visionModel = (
  id: string,
  { provider, upstream, inputs = '[text, image]' }: { provider: string; upstream: string; inputs?: string },
) =>
  `  - id: ${id}\n    inputModalities: ${inputs}\n    pricing: { inputPerMTok: 1, outputPerMTok: 2 }\n    providers: [{ provider: ${provider}, model: ${upstream} }]\n`;

/**
 * Image inputs reach the upstreams through a surface route; each pair's translation is claimed in
 * test/unit/image-translation.test.ts.
 */
describe('image inputs through translation', () => {
  const png = pngBase64;
  const setup = useFamilyGateway({
    extraConfig: [
      visionModel('vision-claude', { provider: 'anthropic', upstream: 'claude-sonnet-4-5-20250929' }),
      visionModel('vision-gemini', { provider: 'gemini', upstream: 'gemini-2.5-flash' }),
      visionModel('text-only', { provider: 'anthropic', upstream: 'claude-haiku', inputs: '[text]' }),
    ],
  });

  it('alpha image_url parts reach Anthropic as image blocks and Gemini as inlineData or fileData', async () => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const content = [
      { type: 'text', text: 'what is this' },
      { type: 'image_url', image_url: { url: `data:image/png;base64,${png}` } },
      { type: 'image_url', image_url: { url: 'https://example.com/cat.webp' } },
    ];
    const post = (model: string) =>
      setup.gateway.request({
        method: 'POST',
        url: '/api/alpha/v1/chat/completions',
        headers: { 'x-api-key': key },
        payload: { model, messages: [{ role: 'user', content }] },
      });
    expect((await post('vision-claude')).statusCode).toBe(200);
    expect((setup.gateway.fakes.anthropic.requests.at(-1)!.body as { messages: unknown[] }).messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'what is this' },
          { type: 'image', source: { type: 'base64', media_type: 'image/png', data: png } },
          { type: 'image', source: { type: 'url', url: 'https://example.com/cat.webp' } },
        ],
      },
    ]);
    expect((await post('vision-gemini')).statusCode).toBe(200);
    expect((setup.gateway.fakes.gemini.requests.at(-1)!.body as { contents: unknown[] }).contents).toEqual([
      {
        role: 'user',
        parts: [
          { text: 'what is this' },
          { inlineData: { mimeType: 'image/png', data: png } },
          { fileData: { mimeType: 'image/webp', fileUri: 'https://example.com/cat.webp' } },
        ],
      },
    ]);
  });

  it('refuses a gamma fileData part that is not an image (a PDF, a video) for another protocol, sending nothing', async () => {
    const { key } = await setup.gateway.createFundedKey({ credits: 1 });
    const sent = setup.gateway.fakes.anthropic.requests.length;
    for (const [mimeType, fileUri] of [
      ['application/pdf', 'https://example.com/report.pdf'],
      ['video/mp4', 'https://www.youtube.com/watch?v=9hE5-98ZeCg'],
    ]) {
      const response = await setup.gateway.request({
        method: 'POST',
        url: '/api/gamma/v1beta/models/vision-claude:generateContent',
        headers: { 'x-api-key': key },
        payload: { contents: [{ role: 'user', parts: [{ text: 'summarise' }, { fileData: { mimeType, fileUri } }] }] },
      });
      expect(response.statusCode, response.body).toBe(400);
      expect(response.json<{ errors: string[] }>().errors[0]).toContain('"fileData" parts');
    }
    expect(setup.gateway.fakes.anthropic.requests.length).toBe(sent);
    // Gemini itself takes them: relayed as given.
    const relayed = await setup.gateway.request({
      method: 'POST',
      url: '/api/gamma/v1beta/models/vision-gemini:generateContent',
      headers: { 'x-api-key': key },
      payload: {
        contents: [
          {
            role: 'user',
            parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'https://example.com/a.pdf' } }],
          },
        ],
      },
    });
    expect(relayed.statusCode, relayed.body).toBe(200);
  });

  it('refuses images for a model without image input, before anything is held', async () => {
    const { key, accountId } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': key },
      payload: {
        model: 'text-only',
        messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/a.png' } }] }],
      },
    });
    expect(response.json()).toMatchObject({ status: 400, errors: ['model "text-only" does not accept image input'] });
    expect(await heldNanosOf(setup.gateway, accountId)).toBe(0n);
  });
});
