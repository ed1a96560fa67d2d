import { describe, expect, it } from 'vitest';
import { Catalog, effectiveCapabilities } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { GatewayError } from '../../src/domain/errors.ts';

const config = `
providers:
  first: { protocol: openai, baseUrl: https://a.example/v1, apiKey: "\${FIRST_KEY}" }
  second: { protocol: anthropic, baseUrl: https://b.example/v1, apiKey: b-key }
  third: { protocol: gemini, baseUrl: https://c.example/v1beta, apiKey: c-key }
models:
  - id: multi
    inputModalities: [text, image]
    outputModalities: [text]
    pricing: { inputPerMTok: 1 }
    providers:
      - { provider: third, model: c-model, priority: 3, capabilities: { strictParams: true } }
      - { provider: first, model: a-model, priority: 1, capabilities: { text: { supportedParameters: [temperature] } } }
      - { provider: second, model: b-model, priority: 2 }
  - id: only-first
    providers: [{ provider: first, model: x }]
  - id: switched-off
    isActive: false
    providers: [{ provider: second, model: y }]
`;

describe('catalog', () => {
  it('orders active rows by priority and takes capabilities from the winner', () => {
    const withFirst = new Catalog(parseConfig(config, 'c.yaml', { FIRST_KEY: 'a-key' }));
    const model = withFirst.resolve('multi');
    expect(model.rows.map((row) => row.upstreamModel)).toEqual(['a-model', 'b-model', 'c-model']);
    expect(effectiveCapabilities(model)).toEqual({ text: { supportedParameters: ['temperature'] } });
    const withoutFirst = new Catalog(parseConfig(config, 'c.yaml', {}));
    expect(withoutFirst.resolve('multi').rows.map((row) => row.providerId)).toEqual(['second', 'third']);
    expect(effectiveCapabilities(withoutFirst.resolve('multi'))).toBeUndefined();
  });

  it('refuses models with no active row, switched off or unknown with a 400 naming the model', () => {
    const catalog = new Catalog(parseConfig(config, 'c.yaml', {}));
    for (const id of ['only-first', 'switched-off', 'nope']) {
      expect(catalog.find(id)).toBeUndefined();
      try {
        catalog.resolve(id);
        expect.unreachable();
      } catch (error) {
        expect(error).toBeInstanceOf(GatewayError);
        expect((error as GatewayError).status).toBe(400);
        expect((error as GatewayError).message).toContain(`"${id}"`);
      }
    }
  });

  it('says a model the operator switched off is switched off, and one without an active row that none serves it', () => {
    const catalog = new Catalog(parseConfig(config, 'c.yaml', {}));
    expect(() => catalog.resolve('switched-off')).toThrow(
      'model "switched-off" is not available: the operator has switched it off',
    );
    expect(() => catalog.resolve('only-first')).toThrow(
      'model "only-first" is not available: no active provider serves it',
    );
    // Switched on again (a reload, or the admin API's switch), it serves; switched off by a replace, it is refused.
    const file = parseConfig(config, 'c.yaml', { FIRST_KEY: 'a-key' });
    catalog.replace({ ...file, models: file.models.map((entry) => ({ ...entry, isActive: entry.id !== 'multi' })) });
    expect(catalog.resolve('switched-off').modelId).toBe('switched-off');
    expect(() => catalog.resolve('multi')).toThrow('model "multi" is not available: the operator has switched it off');
  });

  it('serves a stand-in row only while no other row of its model is active, never as a fallback beside one', () => {
    const standIns = `
providers:
  speech: { protocol: speech, baseUrl: https://speech.example, apiKey: "\${SPEECH_KEY}" }
  sandbox: { protocol: sandbox }
models:
  - id: tts
    pricing: { perMCharacters: 60 }
    providers:
      - { provider: speech, model: seed-tts-1.0, priority: 1 }
      - { provider: sandbox, model: speech, priority: 9, standIn: true }
  - id: plain-fallback
    pricing: { perMCharacters: 60 }
    providers:
      - { provider: speech, model: seed-tts-1.0, priority: 1 }
      - { provider: sandbox, model: speech, priority: 9 }
`;
    const rowsOf = (catalog: Catalog, id: string) => catalog.resolve(id).rows.map((row) => row.providerId);
    const keyed = new Catalog(parseConfig(standIns, 'c.yaml', { SPEECH_KEY: 'k' }));
    expect(rowsOf(keyed, 'tts')).toEqual(['speech']);
    expect(rowsOf(keyed, 'plain-fallback')).toEqual(['speech', 'sandbox']);
    const keyless = new Catalog(parseConfig(standIns, 'c.yaml', {}));
    expect(rowsOf(keyless, 'tts')).toEqual(['sandbox']);
  });

  it('filters by modalities with all-match semantics', () => {
    const catalog = new Catalog(parseConfig(config, 'c.yaml', { FIRST_KEY: 'k' }));
    expect(catalog.list({ inputModalities: ['text', 'image'] }).map((model) => model.modelId)).toEqual(['multi']);
    expect(catalog.list({ inputModalities: ['text'] }).map((model) => model.modelId)).toEqual(['multi', 'only-first']);
    expect(catalog.list({ inputModalities: ['audio'] })).toEqual([]);
  });
});
