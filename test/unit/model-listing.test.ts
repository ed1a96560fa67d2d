import { describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { compatModelFields, generationMethodsOf, pricedModel } from '../../src/gateway/model-listing.ts';

/**
 * The catalog as the model lists show it, without HTTP: the compatibility surfaces' shared fields (one pricing
 * object, by what the model makes, with only the prices it is billed by) and the dashboard's priced view.
 */
const catalog = new Catalog(
  parseConfig(
    `
  providers:
    sandbox: { protocol: sandbox }
    speech: { protocol: speech, baseUrl: https://speech.example, apiKey: k }
  models:
    - { id: chat, name: Chat One, inputModalities: [text, image], limits: { maxOutputTokens: 4096 }, pricing: { inputPerMTok: 1.25, outputPerMTok: 10, inputPerImage: 0.001 }, providers: [{ provider: sandbox, model: echo }] }
    - { id: embed, inputModalities: [text, image], outputModalities: [embedding], pricing: { inputPerMTok: 0.13, inputPerImage: 0.0001, outputPerMTok: 9 }, providers: [{ provider: sandbox, model: embedding }] }
    - { id: picture, outputModalities: [image], pricing: { perImageByQuality: { low: 0.01, medium: 0.04, high: 0.17 }, inputPerMTok: 5 }, providers: [{ provider: sandbox, model: image }] }
    - { id: clip, outputModalities: [video], pricing: { perVideoSecondByResolution: { 480p: 0.02, 720p: 0.05 } }, providers: [{ provider: sandbox, model: video }] }
    - { id: seed-tts-1.0, outputModalities: [audio], pricing: { perMCharacters: 15 }, providers: [{ provider: speech, model: seed-tts-1.0 }] }
    - { id: unpriced, providers: [{ provider: sandbox, model: echo }] }
  `,
    'model-listing.yaml',
    {},
  ),
);

describe("the compatibility lists' shared model fields", () => {
  it('shows a text model its chat prices in USD, and who answers for its capabilities', () => {
    expect(compatModelFields(catalog.resolve('chat'))).toMatchObject({
      name: 'Chat One',
      inputModalities: ['text', 'image'],
      outputModalities: ['text'],
      capabilitiesProviderId: 'sandbox',
      chatPricing: { inputPerMTok: 1.25, outputPerMTok: 10, inputPerImage: 0.001, currency: 'USD' },
    });
  });

  it('shows each model one pricing object, by what it makes, with only the prices of that kind', () => {
    const pricingOf = (id: string) => {
      const fields = compatModelFields(catalog.resolve(id));
      return Object.fromEntries(Object.entries(fields).filter(([key]) => key.endsWith('Pricing')));
    };
    expect(pricingOf('embed')).toEqual({
      embeddingPricing: { inputPerMTok: 0.13, inputPerImage: 0.0001, currency: 'USD' },
    });
    expect(pricingOf('picture')).toEqual({
      imagePricing: { perImageByQuality: { low: 0.01, medium: 0.04, high: 0.17 }, currency: 'USD' },
    });
    expect(pricingOf('clip')).toEqual({
      videoPricing: { perVideoSecondByResolution: { '480p': 0.02, '720p': 0.05 }, currency: 'USD' },
    });
    expect(pricingOf('seed-tts-1.0')).toEqual({ audioPricing: { perMCharacters: 15, currency: 'USD' } });
    expect(pricingOf('unpriced')).toEqual({});
  });

  it('names a model by its id when it has no name', () => {
    expect(compatModelFields(catalog.resolve('embed')).name).toBe('embed');
  });
});

describe('the Gemini methods a model answers', () => {
  it('is text generation and counting for text, embedding for embeddings, none for media', () => {
    expect(generationMethodsOf(catalog.resolve('chat'))).toEqual([
      'generateContent',
      'streamGenerateContent',
      'countTokens',
    ]);
    expect(generationMethodsOf(catalog.resolve('embed'))).toEqual(['embedContent', 'batchEmbedContents']);
    expect(generationMethodsOf(catalog.resolve('picture'))).toEqual([]);
  });
});

describe("the dashboard's priced model", () => {
  it('shows the limits and every USD price, never who serves it', () => {
    const view = pricedModel(catalog.resolve('chat'));
    expect(view).toMatchObject({
      modelId: 'chat',
      name: 'Chat One',
      maxOutputTokens: 4096,
      pricing: { inputPerMTok: 1.25, outputPerMTok: 10, inputPerImage: 0.001 },
    });
    expect(JSON.stringify(view)).not.toContain('sandbox');
  });

  it('gives a text-to-speech model the parameters its route checks, and other models none', () => {
    expect(pricedModel(catalog.resolve('seed-tts-1.0')).speechParameters).toMatchObject({
      speechRate: { type: 'int', min: -50, max: 100 },
    });
    expect(pricedModel(catalog.resolve('chat'))).not.toHaveProperty('speechParameters');
    expect(pricedModel(catalog.resolve('unpriced'))).not.toHaveProperty('pricing');
  });
});
