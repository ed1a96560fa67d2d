import { describe, expect, it } from 'vitest';
import { GenerateContentRequest } from '../../src/protocols/gemini/generate-content.ts';
import { bodyErrors } from '../support/body-check.ts';

/**
 * The gamma surface checks generateContent bodies against the protocol's schema: content that breaks it is
 * refused naming the field as the client spelled it, while fields the gateway does not read pass. The Google
 * error body these messages travel in, and the fields kept reaching the upstream, are claimed over HTTP in
 * gamma-generate.test.ts.
 */
const generate = (body: Record<string, unknown>) => bodyErrors(GenerateContentRequest, body);

describe('gamma generateContent bodies', () => {
  it('refuse inlineData without its data', () => {
    expect(generate({ contents: [{ role: 'user', parts: [{ inlineData: { mimeType: 'image/png' } }] }] })).toEqual([
      "body.contents.0.parts.0.inlineData must have required property 'data'",
    ]);
  });

  it('refuse function call args that are not an object', () => {
    expect(generate({ contents: [{ role: 'model', parts: [{ functionCall: { name: 'f', args: 'x' } }] }] })).toEqual([
      'body.contents.0.parts.0.functionCall.args must be object',
    ]);
  });

  it('refuse a function calling mode outside the list', () => {
    expect(generate({ contents: 'x', toolConfig: { functionCallingConfig: { mode: 'SOMETIMES' } } })).toEqual([
      'body.toolConfig.functionCallingConfig.mode must be one of: MODE_UNSPECIFIED, AUTO, ANY, NONE, VALIDATED',
    ]);
  });

  it('refuse a function declaration without a name', () => {
    expect(generate({ contents: 'x', tools: [{ functionDeclarations: [{ description: 'no name' }] }] })).toEqual([
      "body.tools.0.functionDeclarations.0 must have required property 'name'",
    ]);
  });

  it('refuse a thinking budget that is not an integer', () => {
    expect(generate({ contents: 'x', generationConfig: { thinkingConfig: { thinkingBudget: 'high' } } })).toEqual([
      'body.generationConfig.thinkingConfig.thinkingBudget must be integer',
    ]);
  });

  it('pass fields the gateway does not read', () => {
    expect(
      generate({
        contents: [{ role: 'user', parts: [{ text: 'alpha', videoMetadata: { fps: 1 } }] }],
        generationConfig: { mediaResolution: 'MEDIA_RESOLUTION_LOW', thinkingConfig: { includeThoughts: false } },
        labels: { team: 'a' },
      }),
    ).toEqual([]);
  });
});
