import { ChatAnthropic } from '@langchain/anthropic';
import type { BaseChatModel } from '@langchain/core/language_models/chat_models';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { ChatGoogleGenerativeAI, GoogleGenerativeAIEmbeddings } from '@langchain/google-genai';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
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

/** LangChain JS chat models and embeddings, each given only its base URL and key. */

const openAiTool = {
  type: 'function',
  function: { name: lookupTool.name, description: lookupTool.description, parameters: lookupTool.parameters },
} as const;

/** The status and message of whatever LangChain threw: provider SDK errors carry `status`, wrapped or not. */
function errorOf(error: unknown): { status: number | undefined; message: string } {
  if (!(error instanceof Error)) return { status: undefined, message: String(error) };
  const status = 'status' in error && typeof error.status === 'number' ? error.status : undefined;
  return { status, message: error.message };
}

function langchainDriver(
  chat: (key: string, model: string) => BaseChatModel,
  {
    embeddings,
    streamedStructureMethod,
  }: {
    embeddings?: (key: string, model: string) => { embedDocuments(texts: string[]): Promise<number[][]> };
    /** The `withStructuredOutput` method of the streamed cell, where the client's default cannot stream (matrix-cells.ts). */
    streamedStructureMethod?: 'jsonSchema';
  } = {},
): ClientDriver {
  const withTools = (key: string, model: string) => {
    const base = chat(key, model);
    if (!base.bindTools) throw new Error('this chat model takes no tools');
    return base.bindTools([openAiTool]);
  };
  const structured = (key: string, model: string, method?: 'jsonSchema') =>
    chat(key, model).withStructuredOutput<Record<string, unknown>>(
      { ...answerJsonSchema, title: 'answer' },
      method ? { method } : undefined,
    );
  return {
    generate: async ({ model, key }) => (await chat(key, model).invoke(prompt)).text,
    stream: async ({ model, key }) => {
      let text = '';
      for await (const chunk of await chat(key, model).stream(prompt)) text += chunk.text;
      return text;
    },
    toolsMultiStep: async ({ model, key }) => {
      const messages: BaseMessage[] = [new HumanMessage(prompt)];
      const first = await withTools(key, model).invoke(messages);
      const call = first.tool_calls?.[0];
      if (!call?.id) throw new Error(`no tool call: ${JSON.stringify(first)}`);
      messages.push(first, new ToolMessage({ tool_call_id: call.id, content: toolResult }));
      return (await withTools(key, model).invoke(messages)).text;
    },
    toolsParallel: async ({ model, key }) => {
      const messages = [
        new HumanMessage(prompt),
        new AIMessage({
          content: '',
          tool_calls: parallelCalls.map(({ id, query }) => ({ id, name: lookupTool.name, args: { query } })),
        }),
        ...parallelCalls.map(({ id, result }) => new ToolMessage({ tool_call_id: id, content: result })),
      ];
      return (await withTools(key, model).invoke(messages)).text;
    },
    structured: ({ model, key }) => structured(key, model).invoke(prompt),
    structuredStream: async ({ model, key }) => {
      let last: unknown;
      for await (const chunk of await structured(key, model, streamedStructureMethod).stream(prompt)) last = chunk;
      return last;
    },
    imageInput: async ({ model, key }) => {
      const message = new HumanMessage({
        content: [
          { type: 'text', text: imagePrompt },
          { type: 'image_url', image_url: { url: `data:image/png;base64,${imageBase64}` } },
        ],
      });
      return (await chat(key, model).invoke([message])).text;
    },
    ...(embeddings && {
      embed: ({ model, key }) => embeddings(key, model).embedDocuments(embeddingTexts),
    }),
    errorOf,
  };
}

const openaiDriver = ({ baseUrl }: MatrixGateway) => {
  const configuration = { baseURL: baseUrl('langchain/openai') };
  return langchainDriver((apiKey, model) => new ChatOpenAI({ model, apiKey, configuration }), {
    embeddings: (apiKey, model) => new OpenAIEmbeddings({ model, apiKey, configuration }),
  });
};

const anthropicDriver = ({ baseUrl }: MatrixGateway) =>
  langchainDriver(
    (apiKey, model) => new ChatAnthropic({ model, apiKey, anthropicApiUrl: baseUrl('langchain/anthropic') }),
    { streamedStructureMethod: 'jsonSchema' },
  );

const googleDriver = ({ baseUrl: baseUrlOf }: MatrixGateway) => {
  const baseUrl = baseUrlOf('langchain/google-genai');
  return langchainDriver((apiKey, model) => new ChatGoogleGenerativeAI({ model, apiKey, baseUrl }), {
    embeddings: (apiKey, model) => new GoogleGenerativeAIEmbeddings({ model, apiKey, baseUrl }),
  });
};

describeClientMatrix('LangChain JS', {
  'langchain/openai': openaiDriver,
  'langchain/anthropic': anthropicDriver,
  'langchain/google-genai': googleDriver,
});
