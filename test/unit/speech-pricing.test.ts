import { describe, expect, it } from 'vitest';
import { billedCharacters, speechCostNanos, speechPriceSnapshot } from '../../src/billing/speech-pricing.ts';
import { GatewayError } from '../../src/domain/errors.ts';

/** Text-to-speech pricing on its own: the snapshot a job freezes, the characters it counts, the cost of them. */
describe('text-to-speech pricing', () => {
  it('freezes the per-million-characters price of the model, as a decimal string of nano-USD', () => {
    const pricing = {
      inputNanosPerMTok: undefined,
      outputNanosPerMTok: undefined,
      characterNanosPerM: 15_000_000_000n,
    };
    expect(speechPriceSnapshot({ modelId: 'voice', pricing })).toEqual({
      kind: 'per-m-characters',
      nanos: '15000000000',
    });
  });

  it('refuses a model with no character price, naming it', () => {
    for (const pricing of [undefined, { inputNanosPerMTok: 1_000n, outputNanosPerMTok: 2_000n }]) {
      let failure: unknown;
      try {
        speechPriceSnapshot({ modelId: 'unpriced-voice', pricing });
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(GatewayError);
      expect(failure).toMatchObject({ code: 'GW_MODEL_NOT_PRICED' });
      expect(String(failure)).toContain('unpriced-voice');
    }
  });

  it('counts Unicode code points: a CJK character or an emoji is one character, not two UTF-16 units', () => {
    expect(billedCharacters('')).toBe(0);
    expect(billedCharacters('hello')).toBe(5);
    expect(billedCharacters('你好，世界')).toBe(5);
    expect(billedCharacters('😀😀')).toBe(2);
    expect('😀😀'.length).toBe(4);
  });

  it('prices characters per million, rounded up once to a whole nano-USD', () => {
    const snapshot = { kind: 'per-m-characters' as const, nanos: '15000000000' };
    expect(speechCostNanos(snapshot, 0)).toBe(0n);
    expect(speechCostNanos(snapshot, 1_000_000)).toBe(15_000_000_000n);
    expect(speechCostNanos(snapshot, 1)).toBe(15_000n);
    // 7 characters at 1 nano-USD a million is a fraction of a nano-USD: charged as one.
    expect(speechCostNanos({ kind: 'per-m-characters', nanos: '1' }, 7)).toBe(1n);
    // 3 characters at 333,333 nano-USD a million: 0.999999 of a nano-USD, rounded up to one.
    expect(speechCostNanos({ kind: 'per-m-characters', nanos: '333333' }, 3)).toBe(1n);
    expect(speechCostNanos({ kind: 'per-m-characters', nanos: '333334' }, 3)).toBe(2n);
  });

  it('keeps precision beyond a double: a price and a count whose product passes 2^53', () => {
    const snapshot = { kind: 'per-m-characters' as const, nanos: '9007199254740993' };
    expect(speechCostNanos(snapshot, 1_000_000)).toBe(9_007_199_254_740_993n);
  });
});
