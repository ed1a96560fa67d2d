import { describe, expect, it } from 'vitest';
import { gateParameters } from '../../src/catalog/capability-gate.ts';
import type { Capabilities } from '../../src/domain/capabilities.ts';
import { refusal } from '../support/refusal.ts';

const text: Capabilities = {
  text: { supportedParameters: ['maxTokens', 'temperature'] },
  params: { temperature: { type: 'range', min: 0, max: 1 }, maxTokens: { type: 'int', min: 1, max: 4096 } },
};

describe('capability gate', () => {
  it('lets everything through when the model has no capabilities', () => {
    expect(gateParameters({ modelId: 'm', capabilities: undefined, scope: 'text', optional: { topK: 5 } })).toEqual({
      dropped: [],
    });
  });

  it('refuses an unsupported parameter naming the model and the parameter, never the provider', () => {
    const error = refusal(() =>
      gateParameters({ modelId: 'gpt-x', capabilities: text, scope: 'text', optional: { topK: 3 } }),
    );
    expect(error.code).toBe('GW_PARAMETER_UNSUPPORTED');
    expect(error.status).toBe(400);
    expect(error.message).toContain('"gpt-x"');
    expect(error.message).toContain('"topK"');
  });

  it('ignores parameters that were not sent', () => {
    expect(
      gateParameters({
        modelId: 'm',
        capabilities: text,
        scope: 'text',
        optional: { topK: undefined, temperature: 0.5 },
      }).dropped,
    ).toEqual([]);
  });

  it('drops and reports unsupported parameters when strictParams is false', () => {
    const lenient = { ...text, strictParams: false };
    expect(
      gateParameters({ modelId: 'm', capabilities: lenient, scope: 'text', optional: { topK: 3, seed: 1 } }).dropped,
    ).toEqual(['topK', 'seed']);
  });

  it('enforces ranges, integers, enums, booleans and steps', () => {
    const cases: Array<[Capabilities['params'], Record<string, unknown>, boolean]> = [
      [{ temperature: { type: 'range', min: 0, max: 1 } }, { temperature: 1 }, true],
      [{ temperature: { type: 'range', min: 0, max: 1 } }, { temperature: 1.01 }, false],
      [{ temperature: { type: 'range', min: 0, max: 1 } }, { temperature: 'hot' }, false],
      [{ n: { type: 'int', min: 1, max: 4 } }, { n: 4 }, true],
      [{ n: { type: 'int', min: 1, max: 4 } }, { n: 2.5 }, false],
      [{ n: { type: 'int', min: 1, max: 4 } }, { n: 0 }, false],
      [{ size: { type: 'enum', values: ['1K', '2K'] } }, { size: '2K' }, true],
      [{ size: { type: 'enum', values: ['1K', '2K'] } }, { size: '4K' }, false],
      [{ duration: { type: 'enum', values: [5, 10] } }, { duration: 10 }, true],
      [{ duration: { type: 'enum', values: [5, 10] } }, { duration: '10' }, false],
      [{ watermark: { type: 'bool' } }, { watermark: false }, true],
      [{ watermark: { type: 'bool' } }, { watermark: 'no' }, false],
      [{ seconds: { type: 'range', min: 4, max: 12, steps: [4, 8, 12] } }, { seconds: 8 }, true],
      [{ seconds: { type: 'range', min: 4, max: 12, steps: [4, 8, 12] } }, { seconds: 6 }, false],
      [{ seconds: { type: 'range', min: 4, max: 12, steps: [4, 8, 12] } }, { seconds: '12' }, true],
    ];
    for (const [params, values, accepted] of cases) {
      const run = () =>
        gateParameters({ modelId: 'media', capabilities: { video: { params } }, scope: 'video', optional: {}, values });
      if (accepted) expect(run, JSON.stringify(values)).not.toThrow();
      else expect(refusal(run).code, JSON.stringify(values)).toBe('GW_PARAMETER_OUT_OF_RANGE');
    }
  });

  it('reads the constraint table of the requested scope only', () => {
    const capabilities: Capabilities = { image: { params: { n: { type: 'int', min: 1, max: 2 } } } };
    expect(() =>
      gateParameters({ modelId: 'm', capabilities, scope: 'video', optional: {}, values: { n: 9 } }),
    ).not.toThrow();
    const error = refusal(() =>
      gateParameters({ modelId: 'img', capabilities, scope: 'image', optional: {}, values: { n: 9 } }),
    );
    expect(error.message).toBe('parameter "n" of model "img" must be an integer from 1 to 2');
  });
});
