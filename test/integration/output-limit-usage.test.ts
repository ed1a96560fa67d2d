import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { usageRecords } from '../support/http-helpers.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/**
 * An answer the gateway's held output limit ends before the upstream does (its count of tokens reaches the limit
 * first) is billed what it delivered, and the client is told that same usage: a translated answer carries the
 * gateway's count, and a relayed stream is never billed from the partial usage the upstream had sent so far.
 */
describe('answers ended by the output limit', () => {
  // Long words: many tokens each to the gateway, one each to the fakes, so the gateway's limit ends the answer first.
  const prompt = 'antidisestablishmentarianism floccinaucinihilipilification pneumonoultramicroscopic';

  const setup = useFamilyGateway({ listen: true });

  const billed = async (key: string) => {
    await setup.gateway.settled();
    const [record] = await usageRecords(setup.gateway, key);
    return record!.usage as { promptTokens: number; completionTokens: number };
  };

  it('a translated answer tells the client the usage it is billed, whole and streamed', async () => {
    const first = await setup.gateway.createFundedKey({ credits: 1 });
    const anthropic = new Anthropic({ apiKey: first.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const message = await anthropic.messages.create({
      model: 'via-openai',
      max_tokens: 8,
      messages: [{ role: 'user', content: prompt }],
    });
    expect(message.stop_reason).toBe('max_tokens');
    const charged = await billed(first.key);
    expect(charged.completionTokens).toBeGreaterThan(0);
    expect(message.usage.output_tokens).toBe(charged.completionTokens);

    const second = await setup.gateway.createFundedKey({ credits: 1 });
    const openai = new OpenAI({ apiKey: second.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    const completion = await openai.chat.completions.create({
      model: 'via-anthropic',
      max_tokens: 8,
      messages: [{ role: 'user', content: prompt }],
    });
    expect(completion.choices[0]!.finish_reason).toBe('length');
    expect(completion.usage?.completion_tokens).toBe((await billed(second.key)).completionTokens);

    const third = await setup.gateway.createFundedKey({ credits: 1 });
    const streamed = await new OpenAI({
      apiKey: third.key,
      baseURL: `${setup.address}/api/alpha/v1`,
      maxRetries: 0,
    }).chat.completions.create({
      model: 'via-gemini',
      max_tokens: 8,
      stream: true,
      stream_options: { include_usage: true },
      messages: [{ role: 'user', content: prompt }],
    });
    let told: number | undefined;
    for await (const chunk of streamed) if (chunk.usage) told = chunk.usage.completion_tokens;
    expect(told).toBe((await billed(third.key)).completionTokens);
  });

  it('a relayed stream is billed what it delivered, not the usage the upstream had reported so far, and says so', async () => {
    const first = await setup.gateway.createFundedKey({ credits: 1 });
    const anthropic = new Anthropic({ apiKey: first.key, baseURL: `${setup.address}/api/beta`, maxRetries: 0 });
    const message = await anthropic.messages
      .stream({ model: 'via-anthropic', max_tokens: 8, messages: [{ role: 'user', content: prompt }] })
      .finalMessage();
    expect(message.stop_reason).toBe('max_tokens');
    expect((await billed(first.key)).completionTokens).toBe(message.usage.output_tokens);

    const second = await setup.gateway.createFundedKey({ credits: 1 });
    const gemini = new GoogleGenAI({ apiKey: second.key, httpOptions: { baseUrl: `${setup.address}/api/gamma` } });
    let text = '';
    for await (const chunk of await gemini.models.generateContentStream({
      model: 'via-gemini',
      contents: prompt,
      config: { maxOutputTokens: 8 },
    }))
      text += chunk.text ?? '';
    expect(text).not.toBe('');
    expect((await billed(second.key)).completionTokens).toBeGreaterThan(0);

    // A relayed chat stream carries a usage chunk (`include_usage` is forced on): the limit's end says its own.
    const third = await setup.gateway.createFundedKey({ credits: 1 });
    const openai = new OpenAI({ apiKey: third.key, baseURL: `${setup.address}/api/alpha/v1`, maxRetries: 0 });
    let usage: OpenAI.CompletionUsage | undefined;
    let finish: string | null | undefined;
    for await (const chunk of await openai.chat.completions.create({
      model: 'via-openai',
      max_tokens: 8,
      stream: true,
      messages: [{ role: 'user', content: prompt }],
    })) {
      usage = chunk.usage ?? usage;
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(finish).toBe('length');
    const charged = await billed(third.key);
    expect(usage).toEqual({
      prompt_tokens: charged.promptTokens,
      completion_tokens: charged.completionTokens,
      total_tokens: charged.promptTokens + charged.completionTokens,
    });
  });
});
