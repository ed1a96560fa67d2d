import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeUnstorableText, findUnstorableText } from '../../src/http/storable-text.ts';

describe('findUnstorableText', () => {
  it('finds U+0000 anywhere and names its field as the envelope does', () => {
    expect(findUnstorableText({ messages: [{ role: 'user', content: 'a\u0000b' }] }, 'body')).toEqual({
      path: 'body.messages[0].content',
      reason: 'nul',
    });
    expect(findUnstorableText(['ok', ['\u0000']], 'body')).toEqual({ path: 'body[1][0]', reason: 'nul' });
    expect(findUnstorableText('\u0000', 'body')).toEqual({ path: 'body', reason: 'nul' });
    expect(findUnstorableText({ 'odd key': { 'x-y': 'a\u0000' } }, 'body')?.path).toBe('body["odd key"]["x-y"]');
  });

  it('finds lone surrogates, high or low, and lets paired ones through', () => {
    expect(findUnstorableText({ prompt: 'x\ud800' }, 'body')).toEqual({
      path: 'body.prompt',
      reason: 'lone-surrogate',
    });
    expect(findUnstorableText({ prompt: '\udfffy' }, 'body')).toEqual({
      path: 'body.prompt',
      reason: 'lone-surrogate',
    });
    expect(findUnstorableText({ prompt: '\ude00\ud83d' }, 'body')?.reason).toBe('lone-surrogate');
    expect(findUnstorableText({ prompt: '😀 é 字 \ud83d\ude00' }, 'body')).toBeUndefined();
  });

  it('checks field names, without repeating a bad one in the path', () => {
    expect(findUnstorableText({ a: { 'k\u0000': 1 } }, 'body')).toEqual({ path: 'body.a', reason: 'nul-in-key' });
    expect(findUnstorableText({ '\ud800': 1 }, 'querystring')).toEqual({
      path: 'querystring',
      reason: 'lone-surrogate-in-key',
    });
  });

  it('refuses __proto__ anywhere, and constructor or prototype as top-level fields, only when asked', () => {
    const nested: Record<string, unknown> = JSON.parse('{"tools":[{"parameters":{"__proto__":{"x":1}}}]}');
    expect(findUnstorableText(nested, 'body', { forbidKeys: true })).toEqual({
      path: 'body.tools[0].parameters.__proto__',
      reason: 'forbidden-key',
    });
    expect(findUnstorableText(nested, 'body')).toBeUndefined();
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const top: Record<string, unknown> = JSON.parse(`{"model":"m","${name}":1}`);
      expect(findUnstorableText(top, 'body', { forbidKeys: true })).toEqual({
        path: `body.${name}`,
        reason: 'forbidden-key',
      });
      expect(findUnstorableText(top, 'body')).toBeUndefined();
    }
    // Free-form objects (a tool's JSON Schema, metadata) may name their properties constructor or prototype.
    const schema = {
      tools: [
        {
          parameters: {
            type: 'object',
            properties: { constructor: { type: 'string' }, prototype: { type: 'number' } },
          },
        },
      ],
      metadata: { prototype: 'x' },
    };
    expect(findUnstorableText(schema, 'body', { forbidKeys: true })).toBeUndefined();
    // As values they are ordinary text.
    expect(
      findUnstorableText({ name: '__proto__', role: 'constructor' }, 'body', { forbidKeys: true }),
    ).toBeUndefined();
  });

  it('names the first problem in depth-first order even when later ones exist', () => {
    const value: Record<string, unknown> = JSON.parse(
      '{"a":[1,2,{"b":"ok"},{"c":"x\\u0000"}],"d":{"__proto__":1},"constructor":2}',
    );
    expect(findUnstorableText(value, 'body', { forbidKeys: true })).toEqual({ path: 'body.a[3].c', reason: 'nul' });
    const keyFirst: Record<string, unknown> = JSON.parse('{"d":{"__proto__":1},"a":"\\ud800"}');
    expect(findUnstorableText(keyFirst, 'body', { forbidKeys: true })).toEqual({
      path: 'body.d.__proto__',
      reason: 'forbidden-key',
    });
  });

  it('lets every well-formed JSON value without U+0000, __proto__ or a top-level constructor or prototype through', () => {
    // Nested constructor and prototype fields are allowed: only a top-level one is refused.
    const clean = fc.jsonValue({ maxDepth: 4 }).filter((value) => {
      const text = JSON.stringify(value);
      const topLevel = typeof value === 'object' && value !== null && !Array.isArray(value) ? Object.keys(value) : [];
      return (
        !/__proto__|\\u0000|\\ud[89a-f]/i.test(text) &&
        !topLevel.some((key) => key === 'constructor' || key === 'prototype')
      );
    });
    fc.assert(
      fc.property(clean, (value) => {
        expect(findUnstorableText(value, 'body', { forbidKeys: true })).toBeUndefined();
      }),
    );
  });

  it('finds a bad character put anywhere in a value', () => {
    const bad = fc.constantFrom('\u0000', '\ud800', '\udc00', 'a\u0000', 'x\udbffy');
    // biome-ignore lint/suspicious/noControlCharactersInRegex: NUL is unstorable: the other texts must hold none
    const unstorable = /[\ud800-\udfff\u0000]/g;
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), fc.nat(), bad, (texts, pick, char) => {
        const index = pick % texts.length;
        const value = {
          items: texts.map((text, at) => ({
            text: at === index ? text.replace(/[\ud800-\udfff]/g, '') + char : text.replace(unstorable, ''),
          })),
        };
        expect(findUnstorableText(value, 'body')?.path).toBe(`body.items[${index}].text`);
      }),
    );
  });

  it('ignores numbers, booleans and null', () => {
    expect(findUnstorableText({ a: 1, b: null, c: [true, false, 0] }, 'body')).toBeUndefined();
  });
});

describe('describeUnstorableText', () => {
  it('names the field and what is wrong, without the text itself', () => {
    expect(describeUnstorableText({ path: 'body.prompt', reason: 'nul' })).toMatch(
      /^body\.prompt contains the character U\+0000/,
    );
    expect(describeUnstorableText({ path: 'body.prompt', reason: 'lone-surrogate' })).toMatch(
      /^body\.prompt contains a lone UTF-16 surrogate/,
    );
    expect(describeUnstorableText({ path: 'body.__proto__', reason: 'forbidden-key' })).toMatch(
      /^body\.__proto__ is not an accepted field name/,
    );
  });
});
