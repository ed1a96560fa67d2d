import { createAnthropic } from '@ai-sdk/anthropic';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { createOpenAI } from '@ai-sdk/openai';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import {
  APICallError,
  embedMany,
  generateText,
  jsonSchema,
  Output,
  RetryError,
  stepCountIs,
  streamText,
  tool,
  type EmbeddingModel,
  type LanguageModel,
  type ModelMessage,
} from 'ai';
import {
  answerJsonSchema,
  describeClientMatrix,
  embeddingTexts,
  imageBase64,
  imagePrompt,
  lookupTool,
  parallelCalls,
  prompt,
  toolResult,
  type ClientDriver,
  type MatrixGateway,
} from '../support/client-matrix.ts';

/**
 * The Vercel AI SDK with each provider package, given only the base URL and key. One setting departs from
 * the defaults: the AI SDK retries every 429 twice, 2 s and 4 s apart, whatever `x-should-retry` says, so
 * the calls that may be refused (the error cells) say `maxRetries: 0`; the matrix table says so too.
 */

const schema = jsonSchema<{ query: string }>(answerJsonSchema);
/**
 * `@ai-sdk/openai-compatible` sends structured output as JSON mode without the schema
 * (`response_format: {type: "json_object"}`), so its structured cells give the schema in the system prompt,
 * as its users must.
 */
const schemaInstruction = `Answer with a JSON object valid against this JSON schema: ${JSON.stringify(answerJsonSchema)}`;
const tools = {
  [lookupTool.name]: tool({
    description: lookupTool.description,
    inputSchema: jsonSchema<{ query: string }>(lookupTool.parameters),
    execute: async () => toolResult,
  }),
};

/** Stream errors are read from the stream's parts; the default `onError` would also print each one. */
const onError = () => undefined;

/** A stream's text, or the error its `error` part carries: a stream that fails must not read as an answer. */
async function streamedText(parts: AsyncIterable<{ type: string; text?: string; error?: unknown }>): Promise<string> {
  let text = '';
  for await (const part of parts) {
    if (part.type === 'error') throw part.error;
    if (part.type === 'text-delta') text += part.text ?? '';
  }
  return text;
}

function aiSdkDriver(
  model: (key: string, id: string) => LanguageModel,
  { embedding, system }: { embedding?: (key: string, id: string) => EmbeddingModel; system?: string } = {},
): ClientDriver {
  return {
    generate: async ({ model: id, key }) => (await generateText({ model: model(key, id), prompt, maxRetries: 0 })).text,
    stream: ({ model: id, key }) => streamedText(streamText({ model: model(key, id), prompt, onError }).fullStream),
    toolsMultiStep: async ({ model: id, key }) =>
      (await generateText({ model: model(key, id), prompt, tools, stopWhen: stepCountIs(3) })).text,
    toolsParallel: async ({ model: id, key }) => {
      const messages: ModelMessage[] = [
        { role: 'user', content: prompt },
        {
          role: 'assistant',
          content: parallelCalls.map(({ id: toolCallId, query }) => ({
            type: 'tool-call',
            toolCallId,
            toolName: lookupTool.name,
            input: { query },
          })),
        },
        {
          role: 'tool',
          content: parallelCalls.map(({ id: toolCallId, result }) => ({
            type: 'tool-result',
            toolCallId,
            toolName: lookupTool.name,
            output: { type: 'text', value: result },
          })),
        },
      ];
      return (await generateText({ model: model(key, id), messages, tools })).text;
    },
    structured: async ({ model: id, key }) =>
      (await generateText({ model: model(key, id), system, prompt, output: Output.object({ schema }) })).output,
    structuredStream: async ({ model: id, key }) => {
      const result = streamText({ model: model(key, id), system, prompt, onError, output: Output.object({ schema }) });
      await streamedText(result.fullStream);
      return await result.output;
    },
    imageInput: async ({ model: id, key }) =>
      (
        await generateText({
          model: model(key, id),
          maxRetries: 0,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'text', text: imagePrompt },
                { type: 'image', image: imageBase64, mediaType: 'image/png' },
              ],
            },
          ],
        })
      ).text,
    ...(embedding && {
      embed: async ({ model: id, key }) =>
        (await embedMany({ model: embedding(key, id), values: embeddingTexts })).embeddings,
    }),
    errorOf: (error) => {
      const cause = RetryError.isInstance(error) ? error.lastError : error;
      return APICallError.isInstance(cause)
        ? { status: cause.statusCode, message: `${cause.message} ${cause.responseBody ?? ''}` }
        : { status: undefined, message: String(cause) };
    },
  };
}

const openaiDriver = ({ baseUrl }: MatrixGateway) => {
  const provider = (apiKey: string) => createOpenAI({ apiKey, baseURL: baseUrl('ai-sdk/openai') });
  return aiSdkDriver((key, id) => provider(key)(id), { embedding: (key, id) => provider(key).embedding(id) });
};

const openaiCompatibleDriver = ({ baseUrl }: MatrixGateway) =>
  aiSdkDriver(
    (key, id) =>
      createOpenAICompatible({ name: 'gateway', apiKey: key, baseURL: baseUrl('ai-sdk/openai-compatible') })(id),
    { system: schemaInstruction },
  );

const anthropicDriver = ({ baseUrl }: MatrixGateway) =>
  aiSdkDriver((key, id) => createAnthropic({ apiKey: key, baseURL: baseUrl('ai-sdk/anthropic') })(id));

const googleDriver = ({ baseUrl }: MatrixGateway) => {
  const provider = (apiKey: string) => createGoogleGenerativeAI({ apiKey, baseURL: baseUrl('ai-sdk/google') });
  return aiSdkDriver((key, id) => provider(key)(id), { embedding: (key, id) => provider(key).embedding(id) });
};

describeClientMatrix('Vercel AI SDK', {
  'ai-sdk/openai': openaiDriver,
  'ai-sdk/openai-compatible': openaiCompatibleDriver,
  'ai-sdk/anthropic': anthropicDriver,
  'ai-sdk/google': googleDriver,
});
