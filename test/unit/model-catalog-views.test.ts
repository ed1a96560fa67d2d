import { describe, expect, it } from 'vitest';
import { Catalog } from '../../src/catalog/catalog.ts';
import { parseConfig } from '../../src/config/load-config.ts';
import { inputModalities, outputModalities } from '../../src/domain/capabilities.ts';
import { modelView } from '../../src/surfaces/native/model-view.ts';
import { parseModalities } from '../../src/surfaces/native/models-routes.ts';
import { nativeCatalogYaml } from '../support/native-catalog.ts';
import { refusal } from '../support/refusal.ts';

/**
 * The native catalog as its routes read it: which models are active, the modality filters (all-match), and the
 * spec's Model view of each (the capabilities of the winning row, no provider secret or upstream id). That the
 * routes answer these (and 401, 404 and 400 in the envelope) is claimed over HTTP in catalog.test.ts.
 */

const catalog = new Catalog(
  parseConfig(nativeCatalogYaml, 'catalog.yaml', { CATALOG_TEST_KEYED_KEY: 'sk-test-keyed' }),
);
const activeIds = ['embedder', 'omni', 'painter', 'plain-text', 'vendor/vision-1.5'];

/** The ids the list route answers for the query's values, as its handler filters. */
function listed(filter: { inputModalities?: string | string[]; outputModalities?: string | string[] }): string[] {
  const modalities = {
    inputModalities: parseModalities('inputModalities', filter.inputModalities, inputModalities),
    outputModalities: parseModalities('outputModalities', filter.outputModalities, outputModalities),
  };
  return catalog
    .list(modalities)
    .map((model) => modelView(model).modelId)
    .sort();
}

describe('the active models', () => {
  it('are exactly those with an active row: not those whose only provider has no key, not those switched off', () => {
    expect(listed({})).toEqual(activeIds);
  });

  it('are shown as spec Model objects, active, with no provider secret, address or upstream model id', () => {
    const views = catalog.list().map(modelView);
    for (const view of views) {
      expect(view.isActive).toBe(true);
      expect(typeof view.revision).toBe('number');
      expect(view.providerIds.length).toBeGreaterThan(0);
      expect(view.providerIds).not.toContain('unkeyed');
    }
    const text = JSON.stringify(views);
    for (const secret of ['sk-test-keyed', 'keyed.example.com', 'omni-upstream', 'winner', 'loser-inactive'])
      expect(text).not.toContain(secret);
  });
});

describe('modality filters (all-match)', () => {
  it('inputModalities=image', () => {
    expect(listed({ inputModalities: 'image' })).toEqual(['omni', 'painter', 'vendor/vision-1.5']);
  });

  it('inputModalities=text', () => {
    expect(listed({ inputModalities: 'text' })).toEqual(activeIds);
  });

  it('inputModalities=image,audio', () => {
    expect(listed({ inputModalities: 'image,audio' })).toEqual(['omni']);
  });

  it('inputModalities repeated: image and audio', () => {
    expect(listed({ inputModalities: ['image', 'audio'] })).toEqual(['omni']);
  });

  it('inputModalities=image, audio (a space after the comma)', () => {
    expect(listed({ inputModalities: 'image, audio' })).toEqual(['omni']);
  });

  it('inputModalities=file', () => {
    expect(listed({ inputModalities: 'file' })).toEqual(['omni']);
  });

  it('outputModalities=embedding', () => {
    expect(listed({ outputModalities: 'embedding' })).toEqual(['embedder']);
  });

  it('outputModalities=image', () => {
    expect(listed({ outputModalities: 'image' })).toEqual(['painter']);
  });

  it('outputModalities=text', () => {
    expect(listed({ outputModalities: 'text' })).toEqual(['omni', 'plain-text', 'vendor/vision-1.5']);
  });

  it('outputModalities=text,audio', () => {
    expect(listed({ outputModalities: 'text,audio' })).toEqual(['omni']);
  });

  it('outputModalities repeated: text and audio', () => {
    expect(listed({ outputModalities: ['text', 'audio'] })).toEqual(['omni']);
  });

  it('outputModalities=text,embedding matches none', () => {
    expect(listed({ outputModalities: 'text,embedding' })).toEqual([]);
  });

  it('inputModalities=image with outputModalities=text', () => {
    expect(listed({ inputModalities: 'image', outputModalities: 'text' })).toEqual(['omni', 'vendor/vision-1.5']);
  });

  it('inputModalities=image with outputModalities=image', () => {
    expect(listed({ inputModalities: 'image', outputModalities: 'image' })).toEqual(['painter']);
  });

  it('inputModalities=video with outputModalities=embedding matches none', () => {
    expect(listed({ inputModalities: 'video', outputModalities: 'embedding' })).toEqual([]);
  });

  it('refuses an unknown input modality naming the parameter', () => {
    const error = refusal(() => listed({ inputModalities: 'smell' }));
    expect(error).toMatchObject({ code: 'GW_VALIDATION', status: 400 });
    expect(error.message).toContain('inputModalities');
  });

  it('refuses an output modality as an input one', () => {
    expect(refusal(() => listed({ inputModalities: 'embedding' })).message).toContain('inputModalities');
  });

  it('refuses an unknown modality after a known one', () => {
    expect(refusal(() => listed({ inputModalities: 'text,smell' })).message).toContain('inputModalities');
  });

  it('refuses an unknown output modality naming the parameter', () => {
    expect(refusal(() => listed({ outputModalities: 'smell' })).message).toContain('outputModalities');
  });

  it('refuses an unknown output modality among repeated ones', () => {
    expect(refusal(() => listed({ outputModalities: ['text', 'vectors'] })).message).toContain('outputModalities');
  });
});

describe('the spec Model of one model', () => {
  it('has the capabilities of the priority-winning active row', () => {
    const view = modelView(catalog.get('vendor/vision-1.5'));
    expect(view).toEqual({
      modelId: 'vendor/vision-1.5',
      name: 'Vision with a slash and a dot',
      providerIds: ['keyed', 'sandbox'],
      inputModalities: ['text', 'image'],
      outputModalities: ['text'],
      isActive: true,
      revision: 3,
      capabilities: {
        text: { supportedParameters: ['maxTokens', 'temperature', 'topP'] },
        params: { temperature: { type: 'range', min: 0, max: 1.5 } },
        inputs: { image: { maxCount: 4 } },
      },
    });
  });

  it('is served for a model active only thanks to the environment key', () => {
    const view = modelView(catalog.get('omni'));
    expect(view).toEqual({
      modelId: 'omni',
      providerIds: ['keyed'],
      inputModalities: ['text', 'image', 'file', 'video', 'audio'],
      outputModalities: ['text', 'audio'],
      isActive: true,
      revision: 1,
    });
  });

  it('keeps the nested image params of the winning row', () => {
    const view = modelView(catalog.get('painter'));
    expect(view.capabilities).toEqual({
      image: { params: { size: { type: 'enum', values: ['small', 'large'], default: 'small' } } },
    });
    expect(view.outputModalities).toEqual(['image']);
  });

  it('omits capabilities for a model with none configured (unconstrained)', () => {
    expect(modelView(catalog.get('plain-text'))).toEqual({
      modelId: 'plain-text',
      name: 'Plain text',
      providerIds: ['sandbox'],
      inputModalities: ['text'],
      outputModalities: ['text'],
      isActive: true,
      revision: 1,
    });
  });

  it('is not found, naming the id, for an unknown, unserved or switched-off model or a part of an id', () => {
    for (const modelId of [
      'no-such-model',
      'only-unkeyed',
      'switched-off',
      'vendor',
      'vendor/vision',
      'vendor/vision-1.5/extra',
    ]) {
      const error = refusal(() => catalog.get(modelId));
      expect(error).toMatchObject({ code: 'GW_NOT_FOUND', status: 404 });
      expect(error.message).toContain(modelId);
    }
  });
});
