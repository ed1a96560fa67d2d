import { GoogleGenAI } from '@google/genai';
import OpenAI from 'openai';
import { describe, expect, it } from 'vitest';
import { tokenLogprobsOf as geminiLogprobs } from '../../src/protocols/gemini/generate-content.ts';
import { tokenLogprobsOf as openAiLogprobs } from '../../src/protocols/openai/chat-completions.ts';
import { useFamilyGateway } from '../support/family-gateway.ts';

/** The fakes answer "Echo: <prompt>", a token per word; each word's log probability is -(place % 7 + 1) / 16. */
const expectedTokens = ['Echo:', ' alpha', ' beta'];
const expectedLogprobs = [-1 / 16, -2 / 16, -3 / 16];

/**
 * Log probabilities a client asks for reach it from an upstream of another protocol, in its own protocol's
 * shape (OpenAI's `choices[].logprobs`, Gemini's `logprobsResult`, the native chunk's `logprobs`), whole and
 * streamed; a protocol without them names the parameter as dropped.
 */
describe('log probabilities across protocols', () => {
  const setup = useFamilyGateway({ credits: 5, listen: true });

  it('an OpenAI client gets a Gemini model\u2019s log probabilities, whole and streamed', async () => {
    const client = new OpenAI({ apiKey: setup.key, baseURL: `${setup.address}/api/alpha/v1` });
    const request = {
      model: 'via-gemini',
      messages: [{ role: 'user' as const, content: 'alpha beta' }],
      logprobs: true,
      top_logprobs: 2,
    };
    const completion = await client.chat.completions.create(request);
    expect(setup.gateway.fakes.gemini.requests.at(-1)?.body).toMatchObject({
      generationConfig: { responseLogprobs: true, logprobs: 2 },
    });
    const content = completion.choices[0]!.logprobs?.content ?? [];
    expect(content.map((entry) => entry.token)).toEqual(expectedTokens);
    expect(content.map((entry) => entry.logprob)).toEqual(expectedLogprobs);
    expect(content[1]).toEqual({
      token: ' alpha',
      logprob: -2 / 16,
      bytes: [...Buffer.from(' alpha')],
      top_logprobs: [
        { token: ' alpha', logprob: -2 / 16, bytes: [...Buffer.from(' alpha')] },
        { token: 'alpha~1', logprob: -2 / 16 - 1, bytes: [...Buffer.from('alpha~1')] },
      ],
    });

    // Streamed, each chunk carries the log probabilities of its own text, as the protocol sends them.
    const stream = await client.chat.completions.create({ ...request, stream: true });
    const pieces: Array<{ text: string; tokens: string[] }> = [];
    for await (const chunk of stream) {
      const choice = chunk.choices[0];
      if (choice?.logprobs?.content)
        pieces.push({ text: choice.delta.content ?? '', tokens: choice.logprobs.content.map((entry) => entry.token) });
    }
    expect(pieces).toEqual(expectedTokens.map((token) => ({ text: token, tokens: [token] })));
  });

  it('a Gemini client gets an OpenAI model\u2019s log probabilities as logprobsResult, whole and streamed', async () => {
    const client = new GoogleGenAI({
      apiKey: setup.key,
      httpOptions: { baseUrl: `${setup.address}/api/gamma`, retryOptions: { attempts: 1 } },
    });
    const request = {
      model: 'via-openai',
      contents: 'alpha beta',
      config: { responseLogprobs: true, logprobs: 2 },
    };
    const answer = await client.models.generateContent(request);
    expect(setup.gateway.fakes.openai.requests.at(-1)?.body).toMatchObject({ logprobs: true, top_logprobs: 2 });
    const result = answer.candidates?.[0]?.logprobsResult;
    expect(result?.chosenCandidates?.map((entry) => entry.token)).toEqual(expectedTokens);
    expect(result?.chosenCandidates?.map((entry) => entry.logProbability)).toEqual(expectedLogprobs);
    expect(result?.topCandidates?.[0]?.candidates).toEqual([
      { token: 'Echo:', logProbability: -1 / 16 },
      { token: 'Echo:~1', logProbability: -1 / 16 - 1 },
    ]);

    const chosen: string[] = [];
    for await (const chunk of await client.models.generateContentStream(request))
      for (const entry of chunk.candidates?.[0]?.logprobsResult?.chosenCandidates ?? []) chosen.push(entry.token!);
    expect(chosen).toEqual(expectedTokens);
  });

  it('the native stream sends each token\u2019s log probability before its text', async () => {
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/v1/text/completions',
      headers: { 'x-api-key': setup.key },
      payload: { model: 'via-gemini', messages: [{ role: 'user', content: 'alpha beta' }], logprobs: true },
    });
    expect(response.statusCode, response.body).toBe(200);
    const chunks = response.body
      .split('\n\n')
      .filter((event) => event.startsWith('data: {'))
      .map((event) => JSON.parse(event.slice('data: '.length)) as { delta: string; logprobs?: unknown[] });
    const withLogprobs = chunks.flatMap((chunk, index) => (chunk.logprobs ? [index] : []));
    expect(withLogprobs.map((index) => chunks[index]!.logprobs)).toEqual(
      expectedTokens.map((token, place) => [{ token, logprob: expectedLogprobs[place], topLogprobs: [] }]),
    );
    expect(withLogprobs.map((index) => chunks[index + 1]!.delta)).toEqual(expectedTokens);
  });

  it('a protocol without log probabilities names them as dropped', async () => {
    const response = await setup.gateway.request({
      method: 'POST',
      url: '/api/alpha/v1/chat/completions',
      headers: { 'x-api-key': setup.key },
      payload: { model: 'via-anthropic', messages: [{ role: 'user', content: 'alpha beta' }], logprobs: true },
    });
    expect(response.statusCode, response.body).toBe(200);
    expect(response.headers['x-gateway-dropped-parameters']).toBe('logprobs');
    expect(response.json<{ choices: Array<{ logprobs: unknown }> }>().choices[0]!.logprobs).toBeNull();
  });

  it('reads what an upstream says of them as a log probability, and leaves an unreadable shape out', () => {
    // A positive number is not a log probability; -1e400 reads as -Infinity, which JSON cannot send on, so the
    // upstream's log probabilities are left out (the answer goes on without them).
    const positive = { content: [{ token: 'a', logprob: -0.5, top_logprobs: [{ token: 'b', logprob: 3 }] }] };
    expect(openAiLogprobs(positive)).toEqual([{ token: 'a', logprob: -0.5, top: [{ token: 'b', logprob: 0 }] }]);
    expect(openAiLogprobs(JSON.parse('{"content":[{"token":"a","logprob":-1e400}]}'))).toEqual([]);
    // The legacy completions shape some compatible servers send.
    expect(openAiLogprobs({ tokens: ['a'], token_logprobs: [-0.5] })).toEqual([]);
    // The API's JSON leaves out a field at its default: a token of probability 1 has no logProbability.
    expect(geminiLogprobs({ chosenCandidates: [{ token: 'a' }, { logProbability: -2 }] })).toEqual([
      { token: 'a', logprob: 0, top: [] },
      { token: '', logprob: -2, top: [] },
    ]);
  });
});
