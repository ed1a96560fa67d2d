import { countTokens } from 'gpt-tokenizer';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { promptTokenBound } from '../../src/billing/token-estimate.ts';
import { countTextTokens, textWithinTokens } from '../../src/domain/tokenizer.ts';
import { countDeliveredTokens, DeliveredOutput } from '../../src/domain/delivered-output.ts';

const plain = { disallowedSpecial: new Set<string>() };

describe('token counting', () => {
  it('counts ordinary text exactly as the tokenizer does, also past the piece length', () => {
    const prose = 'The quick brown fox jumps over the lazy dog.\nÜber café naïve 東京 🙂 tabs\there. '.repeat(400);
    expect(prose.length).toBeGreaterThan(20_000);
    expect(countTextTokens(prose)).toBe(countTokens(prose, plain));
  });

  it('agrees with the tokenizer on random text with white space, and never counts less', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme', maxLength: 20_000 }), (text) => {
        const counted = countTextTokens(text);
        expect(counted).toBeGreaterThanOrEqual(countTokens(text, plain));
      }),
      { numRuns: 200 },
    );
  });

  it('counts a million characters without white space (quadratic merging would never finish)', () => {
    const run = 'a'.repeat(1_000_000);
    const counted = countTextTokens(run);
    expect(counted).toBeGreaterThan(0);
    expect(counted).toBeLessThanOrEqual(run.length);
    expect(countTextTokens('😀'.repeat(200_000))).toBeGreaterThan(0);
    expect(countTextTokens(' '.repeat(1_000_000))).toBeGreaterThan(0);
    expect(countTextTokens('!\n'.repeat(500_000))).toBeGreaterThan(0);
  });

  it('cuts text to a number of tokens as it counts them: a beginning the count keeps within it', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 3_000 }), fc.nat(400), (text, maxTokens) => {
        const within = textWithinTokens(text, maxTokens);
        if (!within.cut) {
          expect(within.text).toBe(text);
          expect(countTextTokens(text)).toBeLessThanOrEqual(maxTokens);
        } else {
          expect(countTextTokens(text)).toBeGreaterThan(maxTokens);
          expect(text.startsWith(within.text)).toBe(true);
          expect(countTextTokens(within.text)).toBeLessThanOrEqual(maxTokens);
        }
      }),
      { numRuns: 200 },
    );
    expect(textWithinTokens('a'.repeat(1_000_000), 5).text.length).toBeGreaterThan(0);
  });

  it('bounds a prompt from above by its UTF-8 bytes, in one pass', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 500 }), { minLength: 1, maxLength: 5 }),
        (texts) => {
          const messages = texts.map((content) => ({ role: 'user' as const, content }));
          const counted = texts.reduce((sum, text) => sum + countTokens(text, plain), 0);
          expect(promptTokenBound(messages)).toBeGreaterThanOrEqual(counted);
        },
      ),
      { numRuns: 200 },
    );
  });

  it("bounds a structured answer's schema too, which is sent and billed with the prompt", () => {
    const messages = [{ role: 'user' as const, content: 'hi' }];
    const schema = { type: 'object', properties: { answer: { type: 'string', description: 'd'.repeat(5_000) } } };
    const format = { type: 'json_schema' as const, name: 'reply', schema };
    expect(promptTokenBound(messages, [], format)).toBeGreaterThan(promptTokenBound(messages) + 5_000);
    expect(promptTokenBound(messages, [], { type: 'json_object' })).toBe(promptTokenBound(messages));
  });

  it('keeps delivered output bounded, counting what it no longer keeps a token per character', () => {
    const output = new DeliveredOutput();
    output.add('hello there');
    expect(countDeliveredTokens(output)).toBe(countTokens('hello there', plain));
    const chunk = 'x'.repeat(300_000);
    for (let index = 0; index < 10; index++) output.add(chunk);
    expect(output.text.length).toBe(1024 * 1024);
    expect(output.charactersBeyond).toBe(11 + 3_000_000 - 1024 * 1024);
    expect(countDeliveredTokens(output)).toBeGreaterThanOrEqual(output.charactersBeyond);
  });
});
