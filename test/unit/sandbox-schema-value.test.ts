import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { valueMatchingSchema } from '../../src/providers/sandbox/schema-value.ts';

/** The validator the gateway checks bodies with (strict off), with every format the generator fills. */
const ajv = new Ajv2020({ strict: false });
addFormats.default(ajv);

const prompt = 'What is the weather in Paris?';

function expectValid(schema: Record<string, unknown>): unknown {
  const value = valueMatchingSchema(schema, prompt);
  const validate = ajv.compile(schema);
  expect(validate(value), JSON.stringify({ value, errors: validate.errors })).toBe(true);
  return value;
}

describe('sandbox schema values', () => {
  it('fills required properties with the prompt, the first enum value, and the smallest allowed numbers', () => {
    const value = expectValid({
      type: 'object',
      properties: {
        city: { type: 'string' },
        unit: { type: 'string', enum: ['celsius', 'fahrenheit'] },
        days: { type: 'integer', minimum: 1, maximum: 7 },
        ratio: { type: 'number', exclusiveMinimum: 0, exclusiveMaximum: 1 },
        even: { type: 'integer', minimum: 3, multipleOf: 2 },
        verbose: { type: 'boolean' },
        note: { type: 'string' },
      },
      required: ['city', 'unit', 'days', 'ratio', 'even', 'verbose'],
      additionalProperties: false,
    });
    expect(value).toEqual({ city: prompt, unit: 'celsius', days: 1, ratio: 0.5, even: 4, verbose: true });
  });

  it('fills every declared property when none is required', () => {
    expect(expectValid({ type: 'object', properties: { a: { type: 'string' }, b: { type: 'number' } } })).toEqual({
      a: prompt,
      b: 0,
    });
  });

  it('keeps strings within their lengths and formats', () => {
    const value = expectValid({
      type: 'object',
      properties: {
        short: { type: 'string', maxLength: 4 },
        long: { type: 'string', minLength: 40 },
        when: { type: 'string', format: 'date-time' },
        mail: { type: 'string', format: 'email' },
        link: { type: 'string', format: 'uri' },
        id: { type: 'string', format: 'uuid' },
      },
      required: ['short', 'long', 'when', 'mail', 'link', 'id'],
    });
    expect(value).toMatchObject({ short: 'What' });
  });

  it('makes nested objects and arrays of their minimum length', () => {
    const value = expectValid({
      type: 'object',
      properties: {
        stops: {
          type: 'array',
          minItems: 2,
          items: {
            type: 'object',
            properties: { name: { type: 'string' }, tags: { type: 'array', items: { type: 'string' } } },
            required: ['name', 'tags'],
          },
        },
        pair: { type: 'array', prefixItems: [{ type: 'integer' }, { type: 'string' }], items: false },
        constant: { const: 'fixed' },
        maybe: { type: ['null', 'string'] },
      },
      required: ['stops', 'pair', 'constant', 'maybe'],
    });
    expect(value).toEqual({
      stops: [
        { name: prompt, tags: [] },
        { name: prompt, tags: [] },
      ],
      pair: [0, prompt],
      constant: 'fixed',
      maybe: prompt,
    });
  });

  it('follows local references, alternatives and intersections', () => {
    expectValid({
      type: 'object',
      $defs: { place: { type: 'object', properties: { lat: { type: 'number' } }, required: ['lat'] } },
      properties: {
        where: { $ref: '#/$defs/place' },
        either: { anyOf: [{ type: 'integer', minimum: 5 }, { type: 'string' }] },
        one: { oneOf: [{ type: 'string', enum: ['x'] }, { type: 'number' }] },
        both: {
          allOf: [
            { type: 'object', properties: { a: { type: 'string' } }, required: ['a'] },
            { properties: { b: { type: 'boolean' } }, required: ['b'] },
          ],
        },
      },
      required: ['where', 'either', 'one', 'both'],
    });
  });

  it('stops at a schema that recurses through its required fields instead of looping', () => {
    const schema = {
      $defs: { node: { type: 'object', properties: { next: { $ref: '#/$defs/node' } }, required: ['next'] } },
      $ref: '#/$defs/node',
    };
    expect(() => valueMatchingSchema(schema, prompt)).not.toThrow();
  });

  it('cuts what a schema asks beyond the size of an answer, however it nests, instead of making it', () => {
    const size = (schema: Record<string, unknown>, text = prompt) =>
      JSON.stringify(valueMatchingSchema(schema, text)).length;
    // The answer's 2^16 values, each a few characters of JSON at most beside the strings' 2^16 code points.
    const bound = 2 ** 20;
    expect(size({ type: 'string', minLength: 1e9 })).toBeLessThan(bound);
    expect(size({ type: 'array', minItems: 1e8, items: { type: 'array', minItems: 1e8 } })).toBeLessThan(bound);
    expect(size({ type: 'object', minProperties: 1e9 })).toBeLessThan(bound);
    // A long prompt is read only as far as the value goes.
    expect(valueMatchingSchema({ type: 'string', maxLength: 5 }, 'y'.repeat(10_000_000))).toBe('yyyyy');
    // A reference that fans out at every level (4^24 objects within the depth limit), and many properties.
    const names = Array.from({ length: 4 }, (_, index) => `a${index}`);
    const node = {
      type: 'object',
      required: names,
      properties: Object.fromEntries(names.map((name) => [name, { $ref: '#/$defs/node' }])),
    };
    expect(size({ $defs: { node }, $ref: '#/$defs/node' }, '')).toBeLessThan(bound);
    const wide = Object.fromEntries(Array.from({ length: 400 }, (_, index) => [`p${index}`, { type: 'boolean' }]));
    expect(size({ type: 'object', required: ['p0'], properties: wide, minProperties: 1e9 })).toBeLessThan(bound);
  });

  it('answers a string for an empty schema', () => {
    expect(expectValid({})).toBe(prompt);
  });
});
