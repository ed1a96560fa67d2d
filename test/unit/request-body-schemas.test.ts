import { describe, expect, it } from 'vitest';
import { ChatCompletionsRequest } from '../../src/protocols/openai/chat-completions.ts';
import { ResponsesRequest } from '../../src/protocols/openai/responses.ts';
import { bodyErrors, checkedBody } from '../support/body-check.ts';
import { MessagesRequest } from '../../src/protocols/anthropic/messages.ts';
import { GenerateContentRequest } from '../../src/protocols/gemini/generate-content.ts';
import { TextCompletionBody } from '../../src/surfaces/native/text-completion-codec.ts';
import { LimitsPatch, NewKeyBody, nonBlankPattern } from '../../src/http/schemas.ts';
import { Credentials } from '../../src/surfaces/account/auth-routes.ts';

/**
 * The request bodies of the alpha, beta, gamma, native text and account routes, checked by their routes' own
 * schemas, one describe per route family.
 */
describe('alpha request content', () => {
  /**
   * The alpha request schemas describe content (parts, tool calls, tools, tool choice, answer formats, input
   * items): a known kind that breaks its shape is refused naming the field as the client spelled it, and only
   * that. The 400 envelope these messages travel in is claimed over HTTP in alpha-content-validation.test.ts.
   */
  const user = { role: 'user', content: 'hi' };
  const chat = (body: object) => bodyErrors(ChatCompletionsRequest, { model: 'echo', ...body });
  const responses = (body: object) => bodyErrors(ResponsesRequest, { model: 'echo', ...body });

  describe('alpha chat completions content', () => {
    it('names a text part whose text is not a string', () => {
      expect(chat({ messages: [{ role: 'user', content: [{ type: 'text', text: 5 }] }] })).toEqual([
        'body.messages.0.content.0.text must be string',
      ]);
    });

    it('names an image_url part whose image_url is not an object', () => {
      const content = [
        { type: 'text', text: 'a' },
        { type: 'image_url', image_url: 'x' },
      ];
      expect(chat({ messages: [{ role: 'user', content }] })).toEqual([
        'body.messages.0.content.1.image_url must be object',
      ]);
    });

    it('names a part without its type', () => {
      expect(chat({ messages: [{ role: 'user', content: [{ text: 'a' }] }] })).toEqual([
        "body.messages.0.content.0 must have required property 'type'",
      ]);
    });

    it('names tool call arguments that are not a string', () => {
      const call = { id: 'c', type: 'function', function: { name: 'f', arguments: {} } };
      expect(chat({ messages: [{ role: 'assistant', tool_calls: [call] }] })).toEqual([
        'body.messages.0.tool_calls.0.function.arguments must be string',
      ]);
    });

    it('names a function tool without a name', () => {
      expect(chat({ messages: [user], tools: [{ type: 'function', function: { description: 'x' } }] })).toEqual([
        "body.tools.0.function must have required property 'name'",
      ]);
    });

    it('names a tool_choice string outside the list, saying an object is also allowed', () => {
      expect(chat({ messages: [user], tool_choice: 'any' })).toEqual([
        'body.tool_choice must be one of: none, auto, required, or be of type object',
      ]);
    });

    it('names a tool_choice object naming no function', () => {
      expect(chat({ messages: [user], tool_choice: { type: 'function', function: {} } })).toEqual([
        "body.tool_choice.function must have required property 'name'",
      ]);
    });

    it('names a json_schema response_format without its json_schema', () => {
      expect(chat({ messages: [user], response_format: { type: 'json_schema' } })).toEqual([
        "body.response_format must have required property 'json_schema'",
      ]);
    });

    it('names the stop item that is not a string', () => {
      expect(chat({ messages: [user], stop: ['a', 5] })).toEqual(['body.stop.1 must be string']);
    });

    it('names a stream_options.include_usage that is not a boolean', () => {
      expect(chat({ messages: [user], stream_options: { include_usage: 'yes' } })).toEqual([
        'body.stream_options.include_usage must be of type boolean, null',
      ]);
    });

    it('passes kinds it does not name and unnamed fields, for a same-protocol upstream to take', () => {
      expect(
        chat({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'hi', cache_control: {} },
                { type: 'input_video', video_url: 'https://example.com/v.mp4' },
              ],
              extra: 1,
            },
          ],
          tools: [{ type: 'custom', custom: { name: 'grammar' } }],
          response_format: { type: 'grammar', grammar: 'x' },
          prompt_cache_key: 'k',
        }),
      ).toEqual([]);
    });
  });

  describe('alpha responses content', () => {
    it('names an input_text part without its text', () => {
      expect(responses({ input: [{ role: 'user', content: [{ type: 'input_text' }] }] })).toEqual([
        "body.input.0.content.0 must have required property 'text'",
      ]);
    });

    it('names a message item without its role', () => {
      expect(responses({ input: [{ content: 'x' }] })).toEqual(["body.input.0 must have required property 'role'"]);
    });

    it('names a function_call item without its arguments', () => {
      expect(responses({ input: [{ type: 'function_call', call_id: 'a', name: 'f' }] })).toEqual([
        "body.input.0 must have required property 'arguments'",
      ]);
    });

    it('names a function tool without a name', () => {
      expect(responses({ input: 'x', tools: [{ type: 'function' }] })).toEqual([
        "body.tools.0 must have required property 'name'",
      ]);
    });

    it('names a json_schema text format without its name', () => {
      expect(responses({ input: 'x', text: { format: { type: 'json_schema' } } })).toEqual([
        "body.text.format must have required property 'name'",
      ]);
    });

    it('passes input items of kinds it does not name', () => {
      expect(responses({ input: [{ type: 'reasoning', summary: [] }, user] })).toEqual([]);
    });
  });
});

describe('beta request content', () => {
  /**
   * The beta surface checks message content, tools, tool choice, thinking and answer formats against the
   * protocol's schemas: a wrong field is refused naming it as the client spelled it, while block and tool types
   * the gateway does not know pass. The beta error body these messages travel in is claimed over HTTP in
   * beta-content-validation.test.ts.
   */
  const messages = (fields: Record<string, unknown>) =>
    bodyErrors(MessagesRequest, {
      model: 'via-anthropic',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'hello there' }],
      ...fields,
    });

  describe('beta messages content schemas', () => {
    it('names a text block without text', () => {
      expect(messages({ messages: [{ role: 'user', content: [{ type: 'text' }] }] })).toEqual([
        "body.messages.0.content.0 must have required property 'text'",
      ]);
    });

    it('names an image whose base64 data is not a string', () => {
      const image = { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 7 } };
      expect(messages({ messages: [{ role: 'user', content: [image] }] })).toEqual([
        'body.messages.0.content.0.source.data must be string',
      ]);
    });

    it('names a tool_result without its tool_use_id', () => {
      expect(messages({ messages: [{ role: 'user', content: [{ type: 'tool_result', content: 'x' }] }] })).toEqual([
        "body.messages.0.content.0 must have required property 'tool_use_id'",
      ]);
    });

    it('names a wrong block inside a tool_result', () => {
      const result = { type: 'tool_result', tool_use_id: 't', content: [{ type: 'text' }] };
      expect(messages({ messages: [{ role: 'user', content: [result] }] })).toEqual([
        "body.messages.0.content.0.content.0 must have required property 'text'",
      ]);
    });

    it('names content that is a number', () => {
      expect(messages({ messages: [{ role: 'user', content: 5 }] })).toEqual([
        'body.messages.0.content must be string or array',
      ]);
    });

    it('names a system block that is not text', () => {
      expect(messages({ system: [{ type: 'image', text: 'x' }] })).toEqual(['body.system.0.type must be one of: text']);
    });

    it('names a tool without a name', () => {
      expect(messages({ tools: [{ input_schema: { type: 'object' } }] })).toEqual([
        "body.tools.0 must have required property 'name'",
      ]);
    });

    it('names a tool_choice of an unknown type', () => {
      expect(messages({ tool_choice: { type: 'sometimes' } })).toEqual([
        'body.tool_choice.type must be one of: auto, any, tool, none',
      ]);
    });

    it('names a tool_choice naming no tool', () => {
      expect(messages({ tool_choice: { type: 'tool' } })).toEqual([
        "body.tool_choice must have required property 'name'",
      ]);
    });

    it('names thinking enabled without a budget', () => {
      expect(messages({ thinking: { type: 'enabled' } })).toEqual([
        "body.thinking must have required property 'budget_tokens'",
      ]);
    });

    it('names a json_schema output format without its schema', () => {
      expect(messages({ output_config: { format: { type: 'json_schema' } } })).toEqual([
        "body.output_config.format must have required property 'schema'",
      ]);
    });

    it('passes blocks, sources and tools of types it does not know, extra fields and all', () => {
      expect(
        messages({
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: 'hello there', cache_control: { type: 'ephemeral' } },
                {
                  type: 'search_result',
                  source: 'https://example.com',
                  title: 'T',
                  content: [{ type: 'text', text: 'x' }],
                },
                { type: 'image', source: { type: 'file', file_id: 'file_1' } },
              ],
            },
          ],
          tools: [
            { name: 'lookup', input_schema: { type: 'object' }, strict: true },
            { type: 'web_search_20250305', name: 'web_search', max_uses: 2 },
          ],
          tool_choice: { type: 'auto', disable_parallel_tool_use: true },
          thinking: { type: 'adaptive' },
          metadata: { user_id: 'u1' },
          service_tier: 'auto',
        }),
      ).toEqual([]);
    });
  });
});

describe('gamma request content', () => {
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
});

describe('native text request bodies', () => {
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
});

describe('account request bodies', () => {
  /**
   * The account routes' bodies are checked by their schemas strictly, and a refusal names the field as the client
   * wrote it. The envelope a refusal travels in is claimed over HTTP in error-envelope.test.ts.
   */
  describe('account request bodies', () => {
    it('names the field whose type is wrong', () => {
      expect(bodyErrors(NewKeyBody, { name: 123 })).toEqual(['body.name must be string']);
    });

    it('names a missing required field', () => {
      expect(bodyErrors(Credentials, { email: 'someone@example.com' })).toEqual([
        "body must have required property 'password'",
      ]);
    });

    it('names a field with an invalid format', () => {
      expect(bodyErrors(Credentials, { email: 'not-an-email', password: 'long enough password' })).toEqual([
        'body.email must match format "email"',
      ]);
    });

    it('names a nested field that is out of range', () => {
      expect(bodyErrors(NewKeyBody, { name: 'capped', limits: { daily: -1 } })).toEqual([
        'body.limits.daily must be >= 0',
      ]);
    });

    it('does not coerce a number sent as a string in a body', () => {
      expect(bodyErrors(LimitsPatch, { daily: '5' })).toEqual(['body.daily must be of type number, null']);
      expect(bodyErrors(LimitsPatch, { daily: 5 })).toEqual([]);
    });

    it('names the required field of an empty JSON object', () => {
      expect(bodyErrors(NewKeyBody, {})).toEqual(["body must have required property 'name'"]);
    });

    it('names a field it does not declare, at the top and nested, instead of dropping it', () => {
      expect(
        bodyErrors(Credentials, { email: 'someone@example.com', password: 'long enough', otp: 1 }, 'refuse'),
      ).toEqual(['body.otp is not a recognised field']);
      expect(bodyErrors(NewKeyBody, { name: 'capped', limits: { hourly: 1 } }, 'refuse')).toEqual([
        'body.limits.hourly is not a recognised field',
      ]);
      // The generation surfaces' way, for comparison: the field is gone, without a word.
      expect(checkedBody(NewKeyBody, { name: 'capped', limits: { hourly: 1 } })).toEqual({
        body: { name: 'capped', limits: {} },
      });
    });
  });
});

describe('the pattern of text with something in it', () => {
  // The OpenAPI document carries it to client generators: Python's `re` and Java refuse `\p{...}` classes, and
  // a generated client that cannot compile a pattern cannot be imported.
  it('is written in escapes every regex dialect reads, and reads the same with and without the u flag', () => {
    expect(nonBlankPattern).not.toMatch(/\\[pPu]\{/);
    const plain = new RegExp(nonBlankPattern);
    const unicode = new RegExp(nonBlankPattern, 'u');
    for (const text of ['\u00ad\u3164', '\u200b\u2060\ufeff', '\u2800', ' \u3000', 'a', '한국어', '❤️', 'x\u00ad'])
      expect(plain.test(text), JSON.stringify(text)).toBe(unicode.test(text));
    expect(unicode.test('\u00ad\u115f\u180e\u2800\ufe0f')).toBe(false);
    expect(unicode.test('한국어 ❤️')).toBe(true);
  });
});
