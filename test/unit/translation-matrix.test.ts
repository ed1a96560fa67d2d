import { describe, expect, it } from 'vitest';
import type { ChatRequest, DecodedChat } from '../../src/domain/chat.ts';
import { encodeMessagesRequest } from '../../src/providers/anthropic/anthropic-messages.ts';
import { encodeGenerateContent } from '../../src/providers/gemini/gemini-content.ts';
import { encodeChatRequest } from '../../src/providers/openai/openai-chat.ts';
import { decodeChatMessages } from '../../src/surfaces/alpha/chat-completions-codec.ts';
import { decodeResponsesInput } from '../../src/surfaces/alpha/responses-codec.ts';
import { decodeMessages } from '../../src/surfaces/beta/messages-codec.ts';
import { decodeContents } from '../../src/surfaces/gamma/generate-content-codec.ts';
import { canonical, type TranslatedSurface, translatedPairs } from '../support/translated-pairs.ts';
import { placeSchema } from '../support/place-schema.ts';

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
