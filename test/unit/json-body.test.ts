import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { scanJsonText } from '../../src/domain/json-text.ts';
import { nonFinitePath } from '../../src/http/json-body.ts';

/** Nesting depth of a parsed JSON value, counted as the scanner counts brackets. */
function depthOf(value: unknown): number {
  if (Array.isArray(value)) return 1 + Math.max(0, ...value.map(depthOf));
  if (value !== null && typeof value === 'object') return 1 + Math.max(0, ...Object.values(value).map(depthOf));
  return 0;
}

describe('scanJsonText', () => {
  it('finds nothing wrong in any JSON within the depth limit, whatever its strings hold', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 6 }), (value) => {
        const text = JSON.stringify(value);
        expect(scanJsonText(text, depthOf(value))).toBeUndefined();
        if (depthOf(value) > 0) expect(scanJsonText(text, depthOf(value) - 1)).toBe('too-deep');
      }),
    );
  });

  it('skips brackets and escaped quotes inside strings', () => {
    expect(scanJsonText('{"a":"[[[{{{\\\\\\"]]]"}', 1)).toBeUndefined();
    expect(scanJsonText('["\\"[[["]', 1)).toBeUndefined();
  });

  it('reports numbers that overflow a double, and only those', () => {
    expect(scanJsonText('{"a":1e309}', 64)).toBe('non-finite');
    expect(scanJsonText('[-1E+400]', 64)).toBe('non-finite');
    expect(scanJsonText(`[${'9'.repeat(400)}]`, 64)).toBe('non-finite');
    expect(scanJsonText('[1e308, 1e-400, 123456789, -0.5e3]', 64)).toBeUndefined();
    expect(scanJsonText('["1e999"]', 64)).toBeUndefined();
  });

  it('prefers the depth refusal, so deep text is never parsed', () => {
    expect(scanJsonText(`${'['.repeat(5000)}1e999${']'.repeat(5000)}`, 64)).toBe('too-deep');
  });
});

describe('nonFinitePath', () => {
  it('names the first non-finite number as the envelope names fields', () => {
    expect(nonFinitePath({ a: [1, { b: Infinity }] })).toBe('body.a[1].b');
    expect(nonFinitePath({ a: 1 })).toBeUndefined();
  });
});
