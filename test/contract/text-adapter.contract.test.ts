import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ChatRequest, ChatStreamEvent } from '../../src/domain/chat.ts';
import { Secret } from '../../src/domain/secret.ts';
import { UpstreamHttpError, UpstreamUnreachableError } from '../../src/domain/upstream-failure.ts';
import { createAnthropicAdapter } from '../../src/providers/anthropic/anthropic-adapter.ts';
import { createGeminiAdapter } from '../../src/providers/gemini/gemini-adapter.ts';
import { createOpenAiAdapter } from '../../src/providers/openai/openai-adapter.ts';
import type { ProviderAdapter, ProviderTarget } from '../../src/providers/provider-adapter.ts';
import { sandboxAdapter } from '../../src/providers/sandbox/sandbox-adapter.ts';
import { UpstreamHttp } from '../../src/providers/shared/upstream-http.ts';
import { fakeAnthropicKey, startAnthropicFake } from '../fakes/anthropic-fake.ts';
import type { FakeServer } from '../fakes/fake-server.ts';
import { startGarbageFake } from '../fakes/garbage-fake.ts';
import { fakeGeminiKey, startGeminiFake } from '../fakes/gemini-fake.ts';
import { fakeOpenAiKey, startOpenAiFake } from '../fakes/openai-fake.ts';

/**
 * The one suite every text adapter runs: canonical streaming with usage and finish reasons, the output
 * limit, the upstream's own error status and body, a stream cut mid-way, answers that break the protocol,
 * an unreachable upstream. A case
 * an adapter cannot exercise is skipped with its reason.
 */
interface Subject {
  name: string;
  adapter(http: UpstreamHttp): ProviderAdapter;
  /** Starts the family's fake upstream; undefined for the built-in sandbox, which has no network. */
  fake?: () => Promise<FakeServer>;
  target(fake: FakeServer | undefined): ProviderTarget;
  /** What the adapter's answer to "alpha beta gamma" is: the fakes prefix "Echo:", the sandbox does not. */
  answer: string;
  /** Why the network cases do not apply, when they do not. */
  noNetwork?: string;
}

const target = (baseUrl: string, apiKey: string): ProviderTarget => ({
  baseUrl,
  apiKey: new Secret(apiKey),
  timeoutMs: 2_000,
  firstByteTimeoutMs: 2_000,
  connectTimeoutMs: 2_000,
  maxEventCharacters: 1024 * 1024,
  headers: {},
});

const subjects: Subject[] = [
  {
    name: 'openai',
    adapter: createOpenAiAdapter,
    fake: startOpenAiFake,
    target: (fake) => target(`${fake!.url}/v1`, fakeOpenAiKey),
    answer: 'Echo: alpha beta gamma',
  },
  {
    name: 'anthropic',
    adapter: createAnthropicAdapter,
    fake: startAnthropicFake,
    target: (fake) => target(`${fake!.url}/v1`, fakeAnthropicKey),
    answer: 'Echo: alpha beta gamma',
  },
  {
    name: 'gemini',
    adapter: createGeminiAdapter,
    fake: startGeminiFake,
    target: (fake) => target(`${fake!.url}/v1beta`, fakeGeminiKey),
    answer: 'Echo: alpha beta gamma',
  },
  {
    name: 'sandbox',
    adapter: () => sandboxAdapter,
    target: () => target('', ''),
    answer: 'alpha beta gamma',
    noNetwork: 'the sandbox answers in process: it has no upstream to fail, cut or be unreachable',
  },
];

async function collect(stream: AsyncIterable<ChatStreamEvent>): Promise<ChatStreamEvent[]> {
  const events: ChatStreamEvent[] = [];
  for await (const event of stream) events.push(event);
  return events;
}

const request = (upstreamModel: string, extra: Partial<ChatRequest> = {}): ChatRequest => ({
  upstreamModel,
  messages: [
    { role: 'system', content: 'be brief' },
    { role: 'user', content: 'alpha beta gamma' },
  ],
  ...extra,
});

for (const subject of subjects) {
  describe(`text adapter contract: ${subject.name}`, () => {
    const http = new UpstreamHttp();
    let fake: FakeServer | undefined;
    let garbage: FakeServer | undefined;
    let adapter: ProviderAdapter;

    beforeAll(async () => {
      fake = await subject.fake?.();
      garbage = subject.fake ? await startGarbageFake() : undefined;
      adapter = subject.adapter(http);
    });
    afterAll(async () => {
      await http.close();
      await fake?.close();
      await garbage?.close();
    });

    const stream = (model: string, extra?: Partial<ChatRequest>) =>
      adapter.text!.streamChat(request(model, extra), { target: subject.target(fake) });

    it('streams text deltas and ends with one finish carrying usage', async () => {
      const events = await collect(stream('gpt-test'));
      const finishes = events.filter((event) => event.type === 'finish');
      expect(finishes).toHaveLength(1);
      expect(events.at(-1)).toBe(finishes[0]);
      expect(events.flatMap((event) => (event.type === 'text-delta' ? [event.text] : [])).join('')).toBe(
        subject.answer,
      );
      const finish = finishes[0] as Extract<ChatStreamEvent, { type: 'finish' }>;
      expect(finish.finishReason.unified).toBe('stop');
      expect(finish.usage?.inputTokens).toBeGreaterThan(0);
      expect(finish.usage?.outputTokens).toBeGreaterThan(0);
    });

    it('honours the output limit and reports it as a length finish', async () => {
      const events = await collect(stream('gpt-test', { maxTokens: 2 }));
      const finish = events.at(-1) as Extract<ChatStreamEvent, { type: 'finish' }>;
      expect(finish.finishReason.unified).toBe('length');
      expect(finish.usage?.outputTokens).toBe(2);
    });

    it.skipIf(subject.noNetwork)(
      `raises the upstream's own status and body (${subject.noNetwork ?? 'network'})`,
      async () => {
        const error = await collect(stream('fake-error-429')).catch((caught: unknown) => caught);
        expect(error).toBeInstanceOf(UpstreamHttpError);
        expect((error as UpstreamHttpError).status).toBe(429);
        expect(JSON.parse((error as UpstreamHttpError).body)).toHaveProperty('error');
      },
    );

    it.skipIf(subject.noNetwork)('fails a stream cut mid-way instead of finishing it', async () => {
      const events: ChatStreamEvent[] = [];
      const error = await (async () => {
        for await (const event of stream('fake-cut')) events.push(event);
      })().catch((caught: unknown) => caught);
      expect(error).toBeInstanceOf(UpstreamUnreachableError);
      expect(events.some((event) => event.type === 'finish')).toBe(false);
    });

    it.skipIf(subject.noNetwork)(
      'fails an answer that breaks the protocol, before its first event or mid-way',
      async () => {
        const garbled = (kind: string) =>
          adapter.text!.streamChat(request(`garbage-${kind}`), { target: subject.target(garbage) });
        for (const kind of ['not-json', 'html', 'shape', 'first-event']) {
          const events: ChatStreamEvent[] = [];
          const error = await (async () => {
            for await (const event of garbled(kind)) events.push(event);
          })().catch((caught: unknown) => caught);
          expect(error).toMatchObject({ name: 'UpstreamUnreachableError', reason: 'protocol' });
          expect(events).toEqual([]);
        }
        const events: ChatStreamEvent[] = [];
        const error = await (async () => {
          for await (const event of garbled('third-event')) events.push(event);
        })().catch((caught: unknown) => caught);
        expect(error).toMatchObject({ name: 'UpstreamUnreachableError', reason: 'protocol' });
        expect(events[0]).toEqual({ type: 'text-delta', text: 'Hello' });
        expect(events.some((event) => event.type === 'finish')).toBe(false);
      },
    );

    it.skipIf(subject.noNetwork)('reports an unreachable upstream as such', async () => {
      const unreachable = adapter.text!.streamChat(request('any'), { target: target('http://127.0.0.1:9/v1', 'key') });
      await expect(collect(unreachable)).rejects.toMatchObject({ name: 'UpstreamUnreachableError', reason: 'connect' });
    });
  });
}
