import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { expectEnvelope, heldNanosOf, usageRecords } from '../support/http-helpers.ts';
import { startFamilyGateway, type FamilyGateway } from '../support/test-gateway.ts';

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
  let gateway: FamilyGateway;

  beforeAll(async () => {
    gateway = await startFamilyGateway(['server: { maxJsonDepth: 1000 }']);
  });
  afterAll(async () => {
    await gateway?.close();
  });

  async function refused(url: string, payload: string, field: RegExp) {
    const { key, accountId } = await gateway.createFundedKey({ credits: 1 });
    const response = await gateway.request({
      method: 'POST',
      url,
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      payload,
    });
    const body = expectEnvelope(response, { status: 400, code: 'GW_VALIDATION', path: url.split('?')[0]! });
    expect(body.errors.join(' ')).toMatch(field);
    expect(await heldNanosOf(gateway, accountId)).toBe(0n);
    expect(await usageRecords(gateway, key)).toHaveLength(0);
  }

  it('a gamma tool schema 200 deep sent to a translated model', async () => {
    for (const model of ['via-openai', 'via-anthropic', 'via-sandbox']) {
      await refused(
        `/api/gamma/v1beta/models/${model}:generateContent`,
        `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"lookup","parameters":${deepSchema('OBJECT')}}]}]}`,
        /tools\.0\.functionDeclarations\.0\.parameters/,
      );
    }
  });

  it('an alpha tool schema 200 deep sent to a Gemini model', async () => {
    await refused(
      '/api/alpha/v1/chat/completions',
      `{"model":"via-gemini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"lookup","parameters":${deepSchema('object')}}}]}`,
      /tools\.0\.function\.parameters/,
    );
  });

  it('alpha Responses and beta tool schemas 200 deep', async () => {
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

  it('tool results and arguments 200 deep in a conversation', async () => {
    // Beta tool results holding tool results: the codec walks them by recursion.
    const nestedResult = `${'[{"type":"tool_result","tool_use_id":"call_1","content":'.repeat(depth)}"done"${'}]'.repeat(depth)}`;
    await refused(
      '/api/beta/v1/messages',
      `{"model":"via-openai","max_tokens":50,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"lookup","input":{}}]},{"role":"user","content":${nestedResult}}]}`,
      /body\.messages\.2\.content/,
    );
    await refused(
      '/api/gamma/v1beta/models/via-anthropic:generateContent',
      `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"lookup","args":${deepSchema('object')}}}]}]}`,
      /body\.contents\.1\.parts/,
    );
  });

  it('tool arguments and outputs whose JSON text nests 100,000 deep, which translation would parse and serialise again', async () => {
    // JSON inside a string escapes any limit of the request parser: it becomes objects only when translated.
    const deepText = JSON.stringify(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`);
    const call = `{"id":"call_1","type":"function","function":{"name":"lookup","arguments":${deepText}}}`;
    await refused(
      '/api/alpha/v1/chat/completions',
      `{"model":"via-anthropic","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[${call}]}]}`,
      /body\.messages\.1 holds tool arguments/,
    );
    await refused(
      '/api/alpha/v1/chat/completions',
      `{"model":"via-gemini","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":${deepText}}]}`,
      /body\.messages\.2 holds tool output/,
    );
    await refused(
      '/api/alpha/v1/responses',
      `{"model":"via-gemini","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":${deepText}}]}`,
      /body\.input\.2 holds tool output/,
    );
    await refused(
      '/api/beta/v1/messages',
      `{"model":"via-gemini","max_tokens":50,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"lookup","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":${deepText}}]}]}`,
      /body\.messages\.2 holds tool output/,
    );
  });
});
