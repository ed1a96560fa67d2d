import { describe, expect, it } from 'vitest';
import type { ChatRequest, DecodedChat } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';
import { type TranslatedSurface, canonical, gammaLookupTools, translatedPairs } from '../support/translated-pairs.ts';
import { placeSchema } from '../support/place-schema.ts';
import type { Static, TSchema } from 'typebox';
import { GatewayError } from '../../src/domain/errors.ts';
import { MessagesRequest } from '../../src/protocols/anthropic/messages.ts';
import { GenerateContentRequest } from '../../src/protocols/gemini/generate-content.ts';
import { ChatCompletionsRequest } from '../../src/protocols/openai/chat-completions.ts';
import { ResponsesRequest } from '../../src/protocols/openai/responses.ts';
import { checkedBody } from '../support/body-check.ts';

/**
 * Text requests of each surface decoded and translated for the upstream families, and the codecs' refusal of data
 * nested too deep to translate, one describe per claim.
 */
describe('structured output requests', () => {
  /**
   * A prompt asking for JSON of a schema, on each text surface, translated for each upstream family of another
   * protocol: the upstream's request carries the prompt as the last user turn and the answer format in its own
   * protocol's field. The same requests answered end to end (and relayed to a family of the surface's own
   * protocol) are claimed over HTTP in translation-matrix.test.ts and structured-output.test.ts.
   */
  const prompt = 'where is Paris';
  const schema = placeSchema;

  /** Each surface's request for JSON of the schema, decoded as its route decodes it. */
  const surfaces = {
    alphaChat: () =>
      decodeChatMessages({
        model: 'm',
        messages: [{ role: 'user', content: prompt }],
        response_format: { type: 'json_schema', json_schema: { name: 'place', schema, strict: true } },
      }),
    alphaResponses: () =>
      decodeResponsesInput({
        model: 'm',
        input: prompt,
        text: { format: { type: 'json_schema', name: 'place', schema } },
      }),
    beta: () =>
      decodeMessages({
        model: 'm',
        messages: [{ role: 'user', content: prompt }],
        output_config: { format: { type: 'json_schema', schema } },
      }),
    gamma: () =>
      decodeContents({
        contents: [{ role: 'user', parts: [{ text: prompt }] }],
        generationConfig: {
          responseMimeType: 'application/json',
          responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' } }, required: ['city'] },
        },
      }),
  } satisfies Record<TranslatedSurface, () => DecodedChat>;

  /** What OpenAI, Anthropic and Gemini are asked: the last user turn's text and the answer format's field. */
  const upstreams = {
    openai: (request: ChatRequest) => {
      const body = encodeChatRequest(request);
      expect(body.messages.at(-1)).toEqual({ role: 'user', content: prompt });
      expect(body.response_format).toMatchObject({ type: 'json_schema', json_schema: { schema: expect.any(Object) } });
    },
    anthropic: (request: ChatRequest) => {
      const body = encodeMessagesRequest(request);
      expect(body.messages.at(-1)).toMatchObject({ role: 'user' });
      expect(JSON.stringify(body.messages.at(-1)?.content)).toContain(prompt);
      expect(body.output_config).toMatchObject({ format: { type: 'json_schema', schema: expect.any(Object) } });
    },
    gemini: (request: ChatRequest) => {
      const body = encodeGenerateContent(request);
      expect(body.contents?.at(-1)).toEqual({ role: 'user', parts: [{ text: prompt }] });
      expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json' });
      expect(body.generationConfig?.responseJsonSchema ?? body.generationConfig?.responseSchema).toBeDefined();
    },
  };

  describe('every text surface translated for every upstream family of another protocol', () => {
    for (const [surface, family] of translatedPairs)
      it(`${surface} -> ${family}`, () => {
        upstreams[family](canonical(surfaces[surface]()));
      });

    it('the schema reaches each family as JSON Schema, whichever dialect the surface wrote it in', () => {
      const gamma = canonical(surfaces.gamma());
      expect(encodeChatRequest(gamma).response_format).toMatchObject({
        json_schema: { schema: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] } },
      });
      expect(encodeMessagesRequest(gamma).output_config).toMatchObject({
        format: { schema: { type: 'object', properties: { city: { type: 'string' } } } },
      });
      expect(encodeGenerateContent(canonical(surfaces.beta())).generationConfig).toMatchObject({
        responseJsonSchema: schema,
      });
    });
  });
});

describe('tool call turns', () => {
  /**
   * The second turn of function calling (the question, the call the model made, the tool's result) on each tool
   * surface, translated for each upstream family of another protocol: the upstream gets the tool, the call with
   * its arguments, and a result that answers that call (by id, or for Gemini by name and order). The turns
   * answered end to end are claimed over HTTP in tool-translation.test.ts, whose fakes refuse a result that
   * answers no call.
   */
  const question = 'weather in Paris';
  const toolOutput = '{"forecast":"sunny"}';
  const args = { query: 'Paris' };
  const schema = { type: 'object', properties: { query: { type: 'string' } }, required: ['query'] };

  const surfaces = {
    alphaChat: () =>
      decodeChatMessages({
        model: 'm',
        tools: [{ type: 'function', function: { name: 'lookup', description: 'Looks things up', parameters: schema } }],
        messages: [
          { role: 'user', content: question },
          {
            role: 'assistant',
            content: null,
            tool_calls: [
              { id: 'call_1', type: 'function', function: { name: 'lookup', arguments: JSON.stringify(args) } },
            ],
          },
          { role: 'tool', tool_call_id: 'call_1', content: toolOutput },
        ],
      }),
    alphaResponses: () =>
      decodeResponsesInput({
        model: 'm',
        tools: [
          { type: 'function', name: 'lookup', description: 'Looks things up', parameters: schema, strict: false },
        ],
        input: [
          { role: 'user', content: question },
          { type: 'function_call', call_id: 'call_1', name: 'lookup', arguments: JSON.stringify(args) },
          { type: 'function_call_output', call_id: 'call_1', output: toolOutput },
        ],
      }),
    beta: () =>
      decodeMessages({
        model: 'm',
        tools: [{ name: 'lookup', description: 'Looks things up', input_schema: schema }],
        messages: [
          { role: 'user', content: question },
          { role: 'assistant', content: [{ type: 'tool_use', id: 'call_1', name: 'lookup', input: args }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'call_1', content: toolOutput }] },
        ],
      }),
    gamma: () =>
      decodeContents({
        tools: gammaLookupTools,
        contents: [
          { role: 'user', parts: [{ text: question }] },
          { role: 'model', parts: [{ functionCall: { name: 'lookup', args } }] },
          { role: 'user', parts: [{ functionResponse: { name: 'lookup', response: JSON.parse(toolOutput) } }] },
        ],
      }),
  } satisfies Record<TranslatedSurface, () => DecodedChat>;

  /** What each family is asked: the tool, the call with its arguments, and the result answering that call. */
  const upstreams = {
    openai: (request: ChatRequest) => {
      const body = encodeChatRequest(request);
      expect(body.tools).toMatchObject([{ type: 'function', function: { name: 'lookup' } }]);
      const [user, assistant, tool] = body.messages as Array<Record<string, unknown>>;
      expect(user).toEqual({ role: 'user', content: question });
      expect(assistant).toMatchObject({
        role: 'assistant',
        tool_calls: [{ type: 'function', function: { name: 'lookup' } }],
      });
      const [call] = assistant!.tool_calls as Array<{ id: string; function: { arguments: string } }>;
      expect(JSON.parse(call!.function.arguments)).toEqual(args);
      expect(tool).toMatchObject({ role: 'tool', tool_call_id: call!.id });
      expect(JSON.stringify(tool)).toContain('sunny');
    },
    anthropic: (request: ChatRequest) => {
      const body = encodeMessagesRequest(request);
      expect(body.tools).toMatchObject([{ name: 'lookup', input_schema: { type: 'object' } }]);
      const [, assistant, user] = body.messages;
      const use = (assistant!.content as Array<Record<string, unknown>>).find((block) => block.type === 'tool_use');
      expect(use).toMatchObject({ name: 'lookup', input: args });
      const result = (user!.content as Array<Record<string, unknown>>).find((block) => block.type === 'tool_result');
      expect(result).toMatchObject({ tool_use_id: use!.id });
      expect(JSON.stringify(result)).toContain('sunny');
    },
    gemini: (request: ChatRequest) => {
      const body = encodeGenerateContent(request);
      expect(body.tools).toMatchObject([{ functionDeclarations: [{ name: 'lookup' }] }]);
      const [, model, user] = body.contents ?? [];
      expect(model).toMatchObject({ role: 'model', parts: [{ functionCall: { name: 'lookup', args } }] });
      expect(user).toMatchObject({ role: 'user', parts: [{ functionResponse: { name: 'lookup' } }] });
      expect(JSON.stringify(user)).toContain('sunny');
    },
  };

  describe('a tool call and its result translated for every upstream family of another protocol', () => {
    for (const [surface, family] of translatedPairs)
      it(`${surface} -> ${family}`, () => {
        upstreams[family](canonical(surfaces[surface]()));
      });
  });
});

describe('nesting depth', () => {
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
      expectRefusal(
        refusal(ChatCompletionsRequest, body, decodeChatMessages),
        /body\.messages\.1 holds tool arguments/,
      );
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
});
