import { describe, expect, it } from 'vitest';
import { nativeParameters } from '../../src/catalog/capability-gate.ts';
import { isChatParameter, type ChatParameterName, type ChatRequest, type DecodedChat } from '../../src/domain/chat.ts';
import { anthropicCarries, encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent, geminiCarries } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest, openAiCarries } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages, gatedFields } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents, gatedParametersOf } from '../../src/surfaces/gamma/generate-content-codec.ts';
import {
  decodeParameters,
  optionalFieldNames,
  type TextCompletionBody,
} from '../../src/surfaces/native/text-completion-codec.ts';
import { citySchema as schema, everyNativeField } from '../support/native-text-fields.ts';
import { addressOnlyTarget } from '../support/provider-target.ts';

/**
 * The optional fields of each surface reach each upstream protocol as that protocol's own fields, and what a
 * protocol has no place for is named (the gateway sends those names in x-gateway-dropped-parameters).
 */
type Carries = (name: ChatParameterName, request: ChatRequest) => boolean;

/** An OpenAI-compatible server, which takes the fields routers add beyond OpenAI's own. */
const compatibleTarget = addressOnlyTarget('http://127.0.0.1:9/v1');
const compatibleCarries: Carries = (name, request) => openAiCarries(name, request, compatibleTarget);

/**
 * The parameters the client sent that the upstream protocol has no place for, in the order they were gated:
 * a parameter is carried when the canonical request holds it and the protocol sends it on.
 */
function notCarried(gated: Readonly<Record<string, unknown>>, request: ChatRequest, carries: Carries): string[] {
  return Object.keys(gated).filter(
    (name) =>
      gated[name] !== undefined && !(isChatParameter(name) && request[name] !== undefined && carries(name, request)),
  );
}

function requestOf(decoded: DecodedChat, upstreamModel: string): ChatRequest {
  const { untranslatable, ...chat } = decoded;
  expect(untranslatable).toEqual([]);
  return { upstreamModel, ...chat };
}

const everything: TextCompletionBody = { model: 'm', ...everyNativeField };

/** A native request as the text completions route gates and decodes it. */
function native(body: TextCompletionBody, upstreamModel: string) {
  const gated: Record<string, unknown> = { temperature: body.temperature, maxTokens: body.maxTokens };
  for (const name of optionalFieldNames) gated[name] = body[name];
  const request: ChatRequest = { upstreamModel, messages: body.messages, ...decodeParameters(body) };
  return { gated, request };
}

describe('native text completion fields for each upstream protocol', () => {
  it('sends Anthropic top_k, tools, stop sequences and the answer schema, and names what it has no place for', () => {
    const { gated, request } = native(everything, 'claude-sonnet-4-5-20250929');
    expect(encodeMessagesRequest(request)).toEqual({
      model: 'claude-sonnet-4-5-20250929',
      max_tokens: 50,
      messages: [{ role: 'user', content: 'where is Paris' }],
      stream: true,
      system: 'be brief',
      temperature: 0.3,
      top_p: 0.9,
      stop_sequences: ['END'],
      tools: [{ name: 'lookup', description: 'Finds a city', input_schema: schema }],
      tool_choice: { type: 'tool', name: 'lookup', disable_parallel_tool_use: true },
      top_k: 40,
      // The format's name is the schema's title, which the protocol has no other place for.
      output_config: { format: { type: 'json_schema', schema: { ...schema, title: 'place' } } },
    });
    // Thinking has no room in 50 tokens, and Anthropic takes none with a forced tool (anthropic-thinking.test.ts).
    expect(notCarried(gated, request, anthropicCarries)).toEqual([
      'seed',
      'presencePenalty',
      'frequencyPenalty',
      'repetitionPenalty',
      'minP',
      'topA',
      'logprobs',
      'topLogprobs',
      'logitBias',
      'includeReasoning',
      'reasoningEffort',
      'webSearchOptions',
      'verbosity',
      'thinking',
    ]);
  });

  it('sends Gemini its generationConfig fields, a JSON schema answer format and a thinking budget over the effort', () => {
    const { gated, request } = native(everything, 'gemini-2.5-flash');
    expect(encodeGenerateContent(request)).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'where is Paris' }] }],
      systemInstruction: { parts: [{ text: 'be brief' }] },
      generationConfig: {
        maxOutputTokens: 50,
        temperature: 0.3,
        topP: 0.9,
        stopSequences: ['END'],
        seed: 7,
        topK: 40,
        presencePenalty: 0.1,
        frequencyPenalty: 0.2,
        responseLogprobs: true,
        logprobs: 3,
        thinkingConfig: { thinkingBudget: 2048 },
        responseMimeType: 'application/json',
        responseJsonSchema: { ...schema, title: 'place' },
      },
      tools: [
        { functionDeclarations: [{ name: 'lookup', description: 'Finds a city', parametersJsonSchema: schema }] },
      ],
      toolConfig: { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: ['lookup'] } },
    });
    // An explicit thinking budget wins over the effort, which shares its place.
    expect(notCarried(gated, request, geminiCarries)).toEqual([
      'repetitionPenalty',
      'minP',
      'topA',
      'logitBias',
      'parallelToolCalls',
      'includeReasoning',
      'reasoningEffort',
      'webSearchOptions',
      'verbosity',
    ]);
  });

  it('maps a reasoning effort and thinking off to Gemini thinking settings, and names an effort Gemini has no level for', () => {
    const ask: TextCompletionBody = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const high = native({ ...ask, reasoningEffort: 'high' }, 'g');
    expect(encodeGenerateContent(high.request).generationConfig).toMatchObject({
      thinkingConfig: { thinkingLevel: 'HIGH' },
    });
    expect(notCarried(high.gated, high.request, geminiCarries)).toEqual([]);
    const off = native({ ...ask, thinking: { type: 'disabled' }, responseFormat: { type: 'json_object' } }, 'g');
    expect(encodeGenerateContent(off.request).generationConfig).toMatchObject({
      thinkingConfig: { thinkingBudget: 0 },
      responseMimeType: 'application/json',
    });
    const unknown = native({ ...ask, reasoningEffort: 'xhigh' }, 'g');
    expect(notCarried(unknown.gated, unknown.request, geminiCarries)).toEqual(['reasoningEffort']);
  });
});

describe('compatibility surface fields for an upstream of another protocol', () => {
  it('translates alpha answer formats, penalties and logprobs for Gemini, naming logit_bias', () => {
    const body = {
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      response_format: { type: 'json_schema', json_schema: { name: 'place', schema } },
      presence_penalty: 0.5,
      frequency_penalty: 0.25,
      logprobs: true,
      top_logprobs: 2,
      logit_bias: { '1': 5 },
    };
    const request = requestOf(decodeChatMessages(body), 'gemini-2.5-flash');
    expect(encodeGenerateContent(request).generationConfig).toMatchObject({
      presencePenalty: 0.5,
      frequencyPenalty: 0.25,
      responseLogprobs: true,
      logprobs: 2,
      responseMimeType: 'application/json',
      responseJsonSchema: schema,
    });
    expect(notCarried(nativeParameters(body, gatedFields), request, geminiCarries)).toEqual(['logitBias']);
  });

  it('translates beta top_k and thinking for an OpenAI-compatible upstream', () => {
    const decoded = decodeMessages({
      model: 'm',
      messages: [{ role: 'user', content: 'hi' }],
      top_k: 12,
      thinking: { type: 'enabled', budget_tokens: 1024 },
    });
    const request = requestOf(decoded, 'gpt-4o-mini');
    expect(encodeChatRequest(request, { compatible: true })).toMatchObject({
      top_k: 12,
      reasoning: { max_tokens: 1024 },
    });
    expect(compatibleCarries('topK', request) && compatibleCarries('thinking', request)).toBe(true);
  });

  describe('gamma sampling, schema and thinking settings', () => {
    const body = {
      contents: [{ role: 'user', parts: [{ text: 'hi' }] }],
      generationConfig: {
        topK: 8,
        seed: 3,
        presencePenalty: 0.4,
        responseMimeType: 'application/json',
        responseSchema: { type: 'OBJECT', properties: { city: { type: 'STRING' } } },
        thinkingConfig: { thinkingBudget: 0 },
        responseLogprobs: true,
        logprobs: 4,
      },
    };
    const asJsonSchema = { type: 'object', properties: { city: { type: 'string' } } };

    it('for Anthropic, naming what it has no place for', () => {
      const request = requestOf(decodeContents(body), 'claude-sonnet-4-5-20250929');
      expect(encodeMessagesRequest(request)).toMatchObject({
        top_k: 8,
        thinking: { type: 'disabled' },
        output_config: { format: { type: 'json_schema', schema: asJsonSchema } },
      });
      expect(notCarried(gatedParametersOf(body), request, anthropicCarries)).toEqual([
        'seed',
        'logprobs',
        'topLogprobs',
        'presencePenalty',
      ]);
    });

    it('for an OpenAI-compatible upstream, carrying them all', () => {
      const request = requestOf(decodeContents(body), 'gpt-4o-mini');
      expect(encodeChatRequest(request, { compatible: true })).toMatchObject({
        top_k: 8,
        seed: 3,
        presence_penalty: 0.4,
        logprobs: true,
        top_logprobs: 4,
        response_format: { type: 'json_schema', json_schema: { name: 'response', schema: asJsonSchema } },
        reasoning: { enabled: false },
      });
      expect(notCarried(gatedParametersOf(body), request, compatibleCarries)).toEqual([]);
    });
  });
});
