import type { Static, TSchema } from 'typebox';
import { describe, expect, it } from 'vitest';
import { GatewayError } from '../../src/domain/errors.ts';
import { MessagesRequest } from '../../src/protocols/anthropic/messages.ts';
import { GenerateContentRequest } from '../../src/protocols/gemini/generate-content.ts';
import { ChatCompletionsRequest } from '../../src/protocols/openai/chat-completions.ts';
import { ResponsesRequest } from '../../src/protocols/openai/responses.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';
import { checkedBody } from '../support/body-check.ts';

/**
 * Client data nested hundreds deep (a tool's parameter schema, tool results inside tool results) passes each
 * surface's body schema and is refused by the codec that would walk it by recursion, as a 400 naming the field,
 * never a stack overflow. That such a refusal holds and records nothing is claimed over HTTP in
 * nesting-depth.test.ts.
 */
const depth = 200;

/** JSON text of a schema `depth` objects deep, in the OpenAPI dialect (`OBJECT`) or JSON Schema's; built as text, since JSON.stringify itself recurses. */
function deepSchema(type: string): string {
  const leaf = `{"type":"${type === 'OBJECT' ? 'STRING' : 'string'}"}`;
  return `${`{"type":"${type}","properties":{"inner":`.repeat(depth)}${leaf}${'}}'.repeat(depth)}`;
}

/** The codec's refusal of a body (JSON text) that its route's schema lets through. */
function refusal<S extends TSchema>(schema: S, text: string, decode: (body: Static<S>) => unknown): GatewayError {
  const checked = checkedBody(schema, JSON.parse(text));
  if (checked.errors) throw new Error(`the schema refused the body: ${checked.errors.join('; ')}`);
  try {
    decode(checked.body);
  } catch (error) {
    if (error instanceof GatewayError) return error;
    throw error;
  }
  throw new Error('expected a refusal');
}

function expectRefusal(error: GatewayError, field: RegExp) {
  expect(error.code).toBe('GW_VALIDATION');
  expect(error.status).toBe(400);
  expect(error.message).toMatch(field);
}

/** JSON inside a string escapes any limit of the request parser: it becomes objects only when translated. */
const deepText = JSON.stringify(`${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}`);

describe('client data nested too deep for a codec', () => {
  it('a gamma tool schema 200 deep', () => {
    const body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]}],"tools":[{"functionDeclarations":[{"name":"lookup","parameters":${deepSchema('OBJECT')}}]}]}`;
    expectRefusal(
      refusal(GenerateContentRequest, body, decodeContents),
      /body\.tools\.0\.functionDeclarations\.0\.parameters/,
    );
  });

  it('an alpha chat tool schema 200 deep', () => {
    const body = `{"model":"via-gemini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"lookup","parameters":${deepSchema('object')}}}]}`;
    expectRefusal(refusal(ChatCompletionsRequest, body, decodeChatMessages), /body\.tools\.0\.function\.parameters/);
  });

  it('an alpha Responses tool schema 200 deep', () => {
    const body = `{"model":"via-gemini","input":"hi","tools":[{"type":"web_search"},{"type":"function","name":"lookup","parameters":${deepSchema('object')}}]}`;
    expectRefusal(refusal(ResponsesRequest, body, decodeResponsesInput), /body\.tools\.1\.parameters/);
  });

  it('a beta tool schema 200 deep', () => {
    const body = `{"model":"via-openai","max_tokens":50,"messages":[{"role":"user","content":"hi"}],"tools":[{"name":"lookup","input_schema":${deepSchema('object')}}]}`;
    expectRefusal(refusal(MessagesRequest, body, decodeMessages), /body\.tools\.0\.input_schema/);
  });

  it('beta tool results holding tool results 200 deep', () => {
    const nestedResult = `${'[{"type":"tool_result","tool_use_id":"call_1","content":'.repeat(depth)}"done"${'}]'.repeat(depth)}`;
    const body = `{"model":"via-openai","max_tokens":50,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"lookup","input":{}}]},{"role":"user","content":${nestedResult}}]}`;
    expectRefusal(refusal(MessagesRequest, body, decodeMessages), /body\.messages\.2\.content/);
  });

  it('gamma function call arguments 200 deep', () => {
    const body = `{"contents":[{"role":"user","parts":[{"text":"hi"}]},{"role":"model","parts":[{"functionCall":{"name":"lookup","args":${deepSchema('object')}}}]}]}`;
    expectRefusal(refusal(GenerateContentRequest, body, decodeContents), /body\.contents\.1\.parts/);
  });

  it('alpha chat tool arguments whose JSON text nests 100,000 deep', () => {
    const call = `{"id":"call_1","type":"function","function":{"name":"lookup","arguments":${deepText}}}`;
    const body = `{"model":"via-anthropic","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[${call}]}]}`;
    expectRefusal(refusal(ChatCompletionsRequest, body, decodeChatMessages), /body\.messages\.1 holds tool arguments/);
  });

  it('an alpha chat tool message whose JSON text nests 100,000 deep', () => {
    const body = `{"model":"via-gemini","messages":[{"role":"user","content":"hi"},{"role":"assistant","content":null,"tool_calls":[{"id":"call_1","type":"function","function":{"name":"lookup","arguments":"{}"}}]},{"role":"tool","tool_call_id":"call_1","content":${deepText}}]}`;
    expectRefusal(refusal(ChatCompletionsRequest, body, decodeChatMessages), /body\.messages\.2 holds tool output/);
  });

  it('an alpha Responses function_call_output whose JSON text nests 100,000 deep', () => {
    const body = `{"model":"via-gemini","input":[{"role":"user","content":"hi"},{"type":"function_call","call_id":"call_1","name":"lookup","arguments":"{}"},{"type":"function_call_output","call_id":"call_1","output":${deepText}}]}`;
    expectRefusal(refusal(ResponsesRequest, body, decodeResponsesInput), /body\.input\.2 holds tool output/);
  });

  it('a beta tool_result whose JSON text nests 100,000 deep', () => {
    const body = `{"model":"via-gemini","max_tokens":50,"messages":[{"role":"user","content":"hi"},{"role":"assistant","content":[{"type":"tool_use","id":"call_1","name":"lookup","input":{}}]},{"role":"user","content":[{"type":"tool_result","tool_use_id":"call_1","content":${deepText}}]}]}`;
    expectRefusal(refusal(MessagesRequest, body, decodeMessages), /body\.messages\.2 holds tool output/);
  });
});
