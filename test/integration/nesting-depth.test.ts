import { describe, expect, it } from 'vitest';
import { expectEnvelope, heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * Client data nested hundreds deep (a tool's parameter schema, tool results inside tool results) is refused
 * with a 400 naming the field by every codec that walks it, never a stack overflow answered 500; nothing is
 * held or recorded for it.
 */
/**
 * Deep enough for every codec's bound (64) yet within the body parser's, which this gateway raises to its
 * maximum: at the default parser bound (64) such bodies never reach a codec (the parser's own test).
 */
const depth = 200;

/** JSON text of a schema `depth` objects deep, in the OpenAPI dialect (`OBJECT`) or JSON Schema's; built as text, since JSON.stringify itself recurses. */
function deepSchema(type: string): string {
  const leaf = `{"type":"${type === 'OBJECT' ? 'STRING' : 'string'}"}`;
  return `${`{"type":"${type}","properties":{"inner":`.repeat(depth)}${leaf}${'}}'.repeat(depth)}`;
}

describe('client data nested too deep for a codec', () => {
  const setup = useFamilyGateway({ extraConfig: ['server: { maxJsonDepth: 1000 }'] });

  async function refused(url: string, payload: string, field: RegExp) {
    const { key, accountId } = await setup.gateway.createFundedKey({ credits: 1 });
    const response = await setup.gateway.request({
      method: 'POST',
      url,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload,
    });
    const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url.split('?')[0]! });
    expect(body.errors.join(' ')).toMatch(field);
    expect(await heldNanosOf(setup.gateway, accountId)).toBe(0n);
    expect(await usageRecords(setup.gateway, key)).toHaveLength(0);
  }

  // Each codec's refusal of each kind of deep data (tool schemas, nested tool results, call arguments, tool
  // texts nesting 100,000 deep) is claimed in test/unit/text-translation.test.ts; here, one per route, the 400 it
  // answers, with nothing held or recorded.
  it('a tool schema 200 deep, on each text route', async () => {
    await refused(
      '/api/gamma/v1beta/models/via-openai:generateContent',
      `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"lookup","parameters":${deepSchema('OBJECT')}}]}]}`,
      /tools\.0\.functionDeclarations\.0\.parameters/,
    );
    await refused(
      '/api/alpha/v1/chat/completions',
      `{"model":"via-gemini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"lookup","parameters":${deepSchema('object')}}}]}`,
      /tools\.0\.function\.parameters/,
    );
    await refused(
      '/api/alpha/v1/responses',
      `{"model":"via-gemini","input":"hi","tools":[{"type":"web_search"},{"type":"function","name":"lookup","parameters":${deepSchema('object')}}]}`,
      /body\.tools\.1\.parameters/,
    );
    await refused(
      '/api/beta/v1/messages',
      `{"model":"via-openai","max_tokens":50,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"lookup","input_schema":${deepSchema('object')}}]}`,
      /body\.tools\.0\.input_schema/,
    );
  });

  it('an answer schema 200 deep, on each text route', async () => {
    await refused(
      '/api/gamma/v1beta/models/via-openai:generateContent',
      `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseSchema":${deepSchema('OBJECT')}}}`,
      /body\.generationConfig\.responseSchema/,
    );
    await refused(
      '/api/gamma/v1beta/models/via-openai:generateContent',
      `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"generationConfig":{"responseMimeType":"application/json","responseJsonSchema":${deepSchema('object')}}}`,
      /body\.generationConfig\.responseJsonSchema/,
    );
    await refused(
      '/api/alpha/v1/chat/completions',
      `{"model":"via-gemini","messages":[{"role":"user","content":"hi"}],"response_format":{"type":"json_schema","json_schema":{"name":"a","schema":${deepSchema('object')}}}}`,
      /body\.response_format\.json_schema\.schema/,
    );
    await refused(
      '/api/alpha/v1/responses',
      `{"model":"via-gemini","input":"hi","text":{"format":{"type":"json_schema","name":"a","schema":${deepSchema('object')}}}}`,
      /body\.text\.format\.schema/,
    );
  });
});
