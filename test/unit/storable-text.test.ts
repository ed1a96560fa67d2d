import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { describeUnstorableText, findUnstorableText } from '../../src/http/storable-text.ts';

describe('findUnstorableText', () => {
  it('finds U+0000 anywhere and names its field as the envelope does', () => {
    expect(findUnstorableText({ messages: [{ role: 'user', content: 'a\u0000b' }] }, 'body')).toEqual({ path: 'body.messages[0].content', reason: 'nul' });
    expect(findUnstorableText(['ok', ['\u0000']], 'body')).toEqual({ path: 'body[1][0]', reason: 'nul' });
    expect(findUnstorableText('\u0000', 'body')).toEqual({ path: 'body', reason: 'nul' });
    expect(findUnstorableText({ 'odd key': { 'x-y': 'a\u0000' } }, 'body')?.path).toBe('body["odd key"]["x-y"]');
  });

  it('finds lone surrogates, high or low, and lets paired ones through', () => {
    expect(findUnstorableText({ prompt: 'x\ud800' }, 'body')).toEqual({ path: 'body.prompt', reason: 'lone-surrogate' });
    expect(findUnstorableText({ prompt: '\udfffy' }, 'body')).toEqual({ path: 'body.prompt', reason: 'lone-surrogate' });
    expect(findUnstorableText({ prompt: '\ude00\ud83d' }, 'body')?.reason).toBe('lone-surrogate');
    expect(findUnstorableText({ prompt: '😀 é 字 \ud83d\ude00' }, 'body')).toBeUndefined();
  });

  it('checks field names, without repeating a bad one in the path', () => {
    expect(findUnstorableText({ a: { 'k\u0000': 1 } }, 'body')).toEqual({ path: 'body.a', reason: 'nul-in-key' });
    expect(findUnstorableText({ '\ud800': 1 }, 'querystring')).toEqual({ path: 'querystring', reason: 'lone-surrogate-in-key' });
  });

  it('refuses __proto__, constructor and prototype field names only when asked', () => {
    for (const name of ['__proto__', 'constructor', 'prototype']) {
      const value: Record<string, unknown> = JSON.parse(`{"tools":[{"parameters":{"${name}":{"x":1}}}]}`);
      expect(findUnstorableText(value, 'body', { forbidKeys: true })).toEqual({ path: `body.tools[0].parameters.${name}`, reason: 'forbidden-key' });
      expect(findUnstorableText(value, 'body')).toBeUndefined();
    }
    // As values they are ordinary text.
    expect(findUnstorableText({ name: '__proto__', role: 'constructor' }, 'body', { forbidKeys: true })).toBeUndefined();
  });

  it('lets every well-formed JSON value without U+0000 or those names through', () => {
    const clean = fc.jsonValue({ maxDepth: 4 }).filter((value) => {
      const text = JSON.stringify(value);
      return !/__proto__|constructor|prototype|\\u0000|\\ud[89a-f]/i.test(text);
    });
    fc.assert(
      fc.property(clean, (value) => {
        expect(findUnstorableText(value, 'body', { forbidKeys: true })).toBeUndefined();
      }),
    );
  });

  it('finds a bad character put anywhere in a value', () => {
    const bad = fc.constantFrom('\u0000', '\ud800', '\udc00', 'a\u0000', 'x\udbffy');
    fc.assert(
      fc.property(fc.array(fc.string(), { minLength: 1, maxLength: 5 }), fc.nat(), bad, (texts, pick, char) => {
        const index = pick % texts.length;
        const value = { items: texts.map((text, at) => ({ text: at === index ? text.replace(/[\ud800-\udfff]/g, '') + char : text.replace(/[\ud800-\udfff\u0000]/g, '') })) };
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
    expect(describeUnstorableText({ path: 'body.prompt', reason: 'nul' })).toMatch(/^body\.prompt contains the character U\+0000/);
    expect(describeUnstorableText({ path: 'body.prompt', reason: 'lone-surrogate' })).toMatch(/^body\.prompt contains a lone UTF-16 surrogate/);
    expect(describeUnstorableText({ path: 'body.__proto__', reason: 'forbidden-key' })).toMatch(/^body\.__proto__ is not an accepted field name/);
  });
});
