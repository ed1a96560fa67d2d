import { createAnthropic } from '@ai-sdk/anthropic';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, Type } from '@google/genai';
import OpenAI from 'openai';
import { generateText, Output, stepCountIs, tool } from 'ai';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * The official SDKs' own tool-calling helpers against translated answers: each SDK reassembles streamed
 * calls from the events it expects, so a misplaced index, id or fragment breaks the call it returns.
 */
describe('tool calls through the official SDKs, translated', () => {
  const question = 'weather in Paris';

  const setup = useFamilyGateway({ credits: 1, listen: true });

  it('openai chat.completions.stream assembles a call made by an Anthropic model', async () => {
    const client = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    const stream = client.chat.completions.stream({
      model: 'via-anthropic',
      messages: [{ role: 'user', content: question }],
      tools: [
        {
          type: 'function',
          function: { name: 'lookup', parameters: { type: 'object', properties: { query: { type: 'string' } } } },
        },
      ],
    });
    const completion = await stream.finalChatCompletion();
    const choice = completion.choices[0]!;
    expect(choice.finish_reason).toBe('tool_calls');
    expect(choice.message.content).toBe('Let me look.');
    const call = choice.message.tool_calls![0]!;
    expect(call.type === 'function' && call.function.name).toBe('lookup');
    expect(call.type === 'function' && JSON.parse(call.function.arguments)).toEqual({ query: question });
  });

  it('anthropic messages.stream assembles a call made by an OpenAI model, and takes its result back', async () => {
    const client = new Anthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const tools: Anthropic.Tool[] = [
      { name: 'lookup', input_schema: { type: 'object', properties: { query: { type: 'string' } } } },
    ];
    const first = await client.messages
      .stream({ model: 'via-openai', max_tokens: 100, tools, messages: [{ role: 'user', content: question }] })
      .finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const use = first.content.find((block) => block.type === 'tool_use');
    expect(use).toMatchObject({ type: 'tool_use', name: 'lookup', input: { query: question } });
    const second = await client.messages.create({
      model: 'via-openai',
      max_tokens: 100,
      tools,
      messages: [
        { role: 'user', content: question },
        { role: 'assistant', content: first.content },
        {
          role: 'user',
          content: [{ type: 'tool_result', tool_use_id: use!.type === 'tool_use' ? use!.id : '', content: 'sunny' }],
        },
      ],
    });
    expect(second.content).toEqual([{ type: 'text', text: 'Echo: sunny' }]);
  });

  it('@google/genai reads the functionCalls of an OpenAI model, streamed and not', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const config = {
      tools: [
        {
          functionDeclarations: [
            { name: 'lookup', parameters: { type: Type.OBJECT, properties: { query: { type: Type.STRING } } } },
          ],
        },
      ],
    };
    const response = await client.models.generateContent({ model: 'via-openai', contents: question, config });
    expect(response.functionCalls).toEqual([expect.objectContaining({ name: 'lookup', args: { query: question } })]);
    const calls = [];
    for await (const chunk of await client.models.generateContentStream({
      model: 'via-openai',
      contents: question,
      config,
    }))
      calls.push(...(chunk.functionCalls ?? []));
    expect(calls).toEqual([expect.objectContaining({ name: 'lookup', args: { query: question } })]);
  });

  // The fakes call a tool as a model does, with arguments of the schema it declares.
  it("@google/genai reads calls whose arguments follow the declaration's schema, relayed and translated", async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const parameters = {
      type: Type.OBJECT,
      properties: {
        city: { type: Type.STRING },
        days: { type: Type.INTEGER },
        unit: { type: Type.STRING, format: 'enum', enum: ['C', 'F'] },
        hourly: { type: Type.BOOLEAN },
      },
      required: ['city', 'days'],
    };
    const config = { tools: [{ functionDeclarations: [{ name: 'forecast', parameters }] }] };
    for (const model of ['via-gemini', 'via-anthropic']) {
      const response = await client.models.generateContent({ model, contents: question, config });
      expect(response.functionCalls, model).toEqual([
        expect.objectContaining({ name: 'forecast', args: { city: question, days: 1, unit: 'C', hourly: true } }),
      ]);
    }
  });

  const anthropicProvider = () => createAnthropic({ apiKey: setup.key, baseURL: `${setup.address}/api/beta/v1` });

  it("@ai-sdk/anthropic's structured output, asked through its forced json tool, is an object of the schema", async () => {
    const weather = z.object({
      city: z.string(),
      temperature: z.number(),
      sky: z.enum(['sunny', 'rainy']),
      tags: z.array(z.string()),
    });
    for (const model of ['via-anthropic', 'via-gemini']) {
      const { output } = await generateText({
        model: anthropicProvider()(model),
        output: Output.object({ schema: weather }),
        prompt: question,
        maxRetries: 0,
      });
      expect(output, model).toEqual({ city: question, temperature: 1, sky: 'sunny', tags: [question] });
    }
  });

  it('@ai-sdk/anthropic with tools and structured output: the call forced after the results gives the answer', async () => {
    const tools = { lookup: tool({ inputSchema: z.object({ query: z.string() }), execute: async () => 'sunny' }) };
    const forced = {
      'via-anthropic': { tool_choice: { type: 'any' } },
      'via-gemini': { toolConfig: { functionCallingConfig: { mode: 'ANY' } } },
    };
    for (const [model, choice] of Object.entries(forced)) {
      const { output, steps } = await generateText({
        model: anthropicProvider()(model),
        tools,
        output: Output.object({ schema: z.object({ sky: z.string() }) }),
        stopWhen: stepCountIs(3),
        prompt: question,
        maxRetries: 0,
      });
      // The answer tool's call is the SDK's own: its input is the output, no call of the client's.
      expect(steps.map((step) => step.toolCalls.map((call) => call.toolName))).toEqual([['lookup'], []]);
      expect(output, model).toMatchObject({ sky: expect.stringContaining('sunny') });
      const fake = model === 'via-anthropic' ? setup.gateway.fakes.anthropic : setup.gateway.fakes.gemini;
      expect(fake.requests.at(-1)?.body, model).toMatchObject(choice);
    }
  });
});
