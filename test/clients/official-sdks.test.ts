import Anthropic from '@anthropic-ai/sdk';
import { ApiError, GoogleGenAI, type Content, type FunctionDeclaration } from '@google/genai';
import OpenAI from 'openai';
import {
  answerJsonSchema,
  describeClientMatrix,
  embeddingTexts,
  imageBase64,
  imagePrompt,
  lookupTool,
  maxTokens,
  parallelCalls,
  prompt,
  toolResult,
  type Call,
  type ClientDriver,
  type MatrixGateway,
} from '../support/client-matrix.ts';

/** The official SDKs, each with only its base URL and key set. */

function openaiDriver({ baseUrl }: MatrixGateway): ClientDriver {
  const client = (key: string) => new OpenAI({ apiKey: key, baseURL: baseUrl('openai') });
  const tools: OpenAI.ChatCompletionTool[] = [
    {
      type: 'function',
      function: { name: lookupTool.name, description: lookupTool.description, parameters: lookupTool.parameters },
    },
  ];
  const responseFormat = {
    type: 'json_schema',
    json_schema: { name: 'answer', schema: answerJsonSchema, strict: true },
  } as const;
  const user = (content: string): OpenAI.ChatCompletionMessageParam => ({ role: 'user', content });
  const generate = async ({ model, key }: Call, messages: OpenAI.ChatCompletionMessageParam[]) =>
    (await client(key).chat.completions.create({ model, messages, tools })).choices[0]!.message;
  return {
    generate: async ({ model, key }) =>
      (await client(key).chat.completions.create({ model, messages: [user(prompt)] })).choices[0]!.message.content ??
      '',
    stream: async ({ model, key }) => {
      let text = '';
      const stream = await client(key).chat.completions.create({ model, messages: [user(prompt)], stream: true });
      for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? '';
      return text;
    },
    toolsMultiStep: async (call) => {
      const messages = [user(prompt)];
      const first = await generate(call, messages);
      const toolCall = first.tool_calls?.[0];
      if (toolCall?.type !== 'function') throw new Error(`no tool call: ${JSON.stringify(first)}`);
      messages.push(first, { role: 'tool', tool_call_id: toolCall.id, content: toolResult });
      return (await generate(call, messages)).content ?? '';
    },
    toolsParallel: async (call) => {
      const messages: OpenAI.ChatCompletionMessageParam[] = [
        user(prompt),
        {
          role: 'assistant',
          content: null,
          tool_calls: parallelCalls.map(({ id, query }) => ({
            id,
            type: 'function',
            function: { name: lookupTool.name, arguments: JSON.stringify({ query }) },
          })),
        },
        ...parallelCalls.map(({ id, result }) => ({ role: 'tool' as const, tool_call_id: id, content: result })),
      ];
      return (await generate(call, messages)).content ?? '';
    },
    structured: async ({ model, key }) => {
      const completion = await client(key).chat.completions.parse({
        model,
        messages: [user(prompt)],
        response_format: responseFormat,
      });
      return completion.choices[0]!.message.parsed;
    },
    structuredStream: async ({ model, key }) => {
      const stream = client(key).chat.completions.stream({
        model,
        messages: [user(prompt)],
        response_format: responseFormat,
      });
      return (await stream.finalChatCompletion()).choices[0]!.message.parsed;
    },
    imageInput: async ({ model, key }) => {
      const completion = await client(key).chat.completions.create({
        model,
        messages: [
          {
            role: 'user',
            content: [
              { type: 'text', text: imagePrompt },
              { type: 'image_url', image_url: { url: `data:image/png;base64,${imageBase64}` } },
            ],
          },
        ],
      });
      return completion.choices[0]!.message.content ?? '';
    },
    embed: async ({ model, key }) =>
      (await client(key).embeddings.create({ model, input: embeddingTexts })).data.map((item) => item.embedding),
    errorOf: (error) =>
      error instanceof OpenAI.APIError
        ? { status: error.status, message: error.message }
        : { status: undefined, message: String(error) },
  };
}

function anthropicDriver({ baseUrl }: MatrixGateway): ClientDriver {
  const client = (key: string) => new Anthropic({ apiKey: key, baseURL: baseUrl('@anthropic-ai/sdk') });
  const tools: Anthropic.Tool[] = [
    { name: lookupTool.name, description: lookupTool.description, input_schema: lookupTool.parameters },
  ];
  const outputConfig = { format: { type: 'json_schema', schema: answerJsonSchema } } as const;
  const textOf = (message: Anthropic.Message) =>
    message.content.flatMap((block) => (block.type === 'text' ? [block.text] : [])).join('');
  const create = ({ model, key }: Call, messages: Anthropic.MessageParam[]) =>
    client(key).messages.create({ model, max_tokens: maxTokens, tools, messages });
  return {
    generate: async ({ model, key }) =>
      textOf(
        await client(key).messages.create({
          model,
          max_tokens: maxTokens,
          messages: [{ role: 'user', content: prompt }],
        }),
      ),
    stream: async ({ model, key }) => {
      let text = '';
      const stream = client(key).messages.stream({
        model,
        max_tokens: maxTokens,
        messages: [{ role: 'user', content: prompt }],
      });
      stream.on('text', (delta) => {
        text += delta;
      });
      await stream.finalMessage();
      return text;
    },
    toolsMultiStep: async (call) => {
      const messages: Anthropic.MessageParam[] = [{ role: 'user', content: prompt }];
      const first = await create(call, messages);
      const use = first.content.find((block) => block.type === 'tool_use');
      if (use?.type !== 'tool_use') throw new Error(`no tool use: ${JSON.stringify(first)}`);
      messages.push(
        { role: 'assistant', content: first.content },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: toolResult }] },
      );
      return textOf(await create(call, messages));
    },
    toolsParallel: async (call) =>
      textOf(
        await create(call, [
          { role: 'user', content: prompt },
          {
            role: 'assistant',
            content: parallelCalls.map(({ id, query }) => ({
              type: 'tool_use' as const,
              id,
              name: lookupTool.name,
              input: { query },
            })),
          },
          {
            role: 'user',
            content: parallelCalls.map(({ id, result }) => ({
              type: 'tool_result' as const,
              tool_use_id: id,
              content: result,
            })),
          },
        ]),
      ),
    structured: async ({ model, key }) => {
      const message = await client(key).messages.create({
        model,
        max_tokens: maxTokens,
        output_config: outputConfig,
        messages: [{ role: 'user', content: prompt }],
      });
      return JSON.parse(textOf(message));
    },
    structuredStream: async ({ model, key }) => {
      const stream = client(key).messages.stream({
        model,
        max_tokens: maxTokens,
        output_config: outputConfig,
        messages: [{ role: 'user', content: prompt }],
      });
      return JSON.parse(textOf(await stream.finalMessage()));
    },
    imageInput: async ({ model, key }) =>
      textOf(
        await client(key).messages.create({
          model,
          max_tokens: maxTokens,
          messages: [
            {
              role: 'user',
              content: [
                { type: 'image', source: { type: 'base64', media_type: 'image/png', data: imageBase64 } },
                { type: 'text', text: imagePrompt },
              ],
            },
          ],
        }),
      ),
    errorOf: (error) =>
      error instanceof Anthropic.APIError
        ? { status: error.status, message: error.message }
        : { status: undefined, message: String(error) },
  };
}

function genaiDriver({ baseUrl }: MatrixGateway): ClientDriver {
  const client = (key: string) => new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: baseUrl('@google/genai') } });
  const declaration: FunctionDeclaration = {
    name: lookupTool.name,
    description: lookupTool.description,
    parametersJsonSchema: lookupTool.parameters,
  };
  const config = { tools: [{ functionDeclarations: [declaration] }] };
  const structuredConfig = { responseMimeType: 'application/json', responseJsonSchema: answerJsonSchema };
  const userTurn = (text: string): Content => ({ role: 'user', parts: [{ text }] });
  return {
    generate: async ({ model, key }) =>
      (await client(key).models.generateContent({ model, contents: prompt })).text ?? '',
    stream: async ({ model, key }) => {
      let text = '';
      for await (const chunk of await client(key).models.generateContentStream({ model, contents: prompt }))
        text += chunk.text ?? '';
      return text;
    },
    toolsMultiStep: async ({ model, key }) => {
      const contents = [userTurn(prompt)];
      const first = await client(key).models.generateContent({ model, contents, config });
      const functionCall = first.functionCalls?.[0];
      if (!functionCall) throw new Error(`no function call: ${JSON.stringify(first)}`);
      contents.push(first.candidates![0]!.content!, {
        role: 'user',
        parts: [{ functionResponse: { id: functionCall.id, name: lookupTool.name, response: { result: toolResult } } }],
      });
      return (await client(key).models.generateContent({ model, contents, config })).text ?? '';
    },
    toolsParallel: async ({ model, key }) => {
      const contents: Content[] = [
        userTurn(prompt),
        {
          role: 'model',
          parts: parallelCalls.map(({ query }) => ({ functionCall: { name: lookupTool.name, args: { query } } })),
        },
        {
          role: 'user',
          parts: parallelCalls.map(({ result }) => ({
            functionResponse: { name: lookupTool.name, response: { result } },
          })),
        },
      ];
      return (await client(key).models.generateContent({ model, contents, config })).text ?? '';
    },
    structured: async ({ model, key }) =>
      JSON.parse(
        (await client(key).models.generateContent({ model, contents: prompt, config: structuredConfig })).text ?? '',
      ),
    structuredStream: async ({ model, key }) => {
      let text = '';
      const stream = await client(key).models.generateContentStream({
        model,
        contents: prompt,
        config: structuredConfig,
      });
      for await (const chunk of stream) text += chunk.text ?? '';
      return JSON.parse(text);
    },
    imageInput: async ({ model, key }) => {
      const answer = await client(key).models.generateContent({
        model,
        contents: [
          {
            role: 'user',
            parts: [{ inlineData: { mimeType: 'image/png', data: imageBase64 } }, { text: imagePrompt }],
          },
        ],
      });
      return answer.text ?? '';
    },
    embed: async ({ model, key }) => {
      const answer = await client(key).models.embedContent({ model, contents: embeddingTexts });
      return (answer.embeddings ?? []).map((embedding) => embedding.values ?? []);
    },
    errorOf: (error) =>
      error instanceof ApiError
        ? { status: error.status, message: error.message }
        : { status: undefined, message: String(error) },
  };
}

describeClientMatrix('official SDKs', {
  openai: openaiDriver,
  '@anthropic-ai/sdk': anthropicDriver,
  '@google/genai': genaiDriver,
});
