import { describe, expect, it } from 'vitest';
import { TextCompletionBody } from '../../src/surfaces/native/text-completion-codec.ts';
import { bodyErrors } from '../support/body-check.ts';

/**
 * The native text completion body (spec, Native: text) refused by its schema, naming the field. That the route
 * answers these with a 400 before any charge, and the refusals of the model (unknown, unpriced, a parameter it
 * does not take), are claimed over HTTP in native-text.test.ts.
 */
const messages = [{ role: 'user', content: 'x' }];
const completion = (fields: Record<string, unknown>) =>
  bodyErrors(TextCompletionBody, { model: 'sandbox-echo', messages, ...fields });

describe('native text completion bodies', () => {
  it('take a model, messages and the optional fields of the spec', () => {
    expect(completion({ temperature: 2, maxTokens: 1, topK: 4 })).toEqual([]);
  });

  it('refuse a temperature above 2', () => {
    expect(completion({ temperature: 2.5 })).toEqual(['body.temperature must be <= 2']);
  });

  it('refuse an empty message list', () => {
    expect(completion({ messages: [] })).toEqual(['body.messages must NOT have fewer than 1 items']);
  });

  it('refuse a role outside system, user and assistant', () => {
    expect(completion({ messages: [{ role: 'tool', content: 'x' }] })).toEqual([
      'body.messages.0.role must be one of: system, user, assistant',
    ]);
  });

  it('refuse an empty message', () => {
    expect(completion({ messages: [{ role: 'user', content: '' }] })).toEqual([
      'body.messages.0.content must NOT have fewer than 1 characters',
    ]);
  });

  it('refuse an empty model id', () => {
    expect(completion({ model: '' })).toEqual(['body.model must NOT have fewer than 1 characters']);
  });

  it('refuse maxTokens 0', () => {
    expect(completion({ maxTokens: 0 })).toEqual(['body.maxTokens must be >= 1']);
  });
});
