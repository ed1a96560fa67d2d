import { createParser } from 'eventsource-parser';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayReading, RelayRequest } from '../provider-adapter.ts';
import { JsonCopy } from '../shared/json-copy.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { geminiPath, usageFromMetadata, type GenerateContentChunk } from './gemini-content.ts';

const actions: Partial<Record<RelayOperation, string>> = {
  'generate-content': 'generateContent',
  'stream-generate-content-sse': 'streamGenerateContent?alt=sse',
  'stream-generate-content-json': 'streamGenerateContent',
};

export async function relayGemini(http: UpstreamHttp, { operation, upstreamModel, body }: RelayRequest, options: CallOptions): Promise<RawExchange> {
  const action = actions[operation];
  if (!action) throw new Error(`the Gemini protocol has no ${operation} operation`);
  const response = await http.postJson(options.target, geminiPath(upstreamModel, action), { 'x-goog-api-key': options.target.apiKey }, body);
  const contentType = response.headers['content-type'];
  return { status: response.status, contentType: Array.isArray(contentType) ? contentType[0] : contentType, body: response.body };
}

function observe(state: RelayReading, chunk: GenerateContentChunk): void {
  if (chunk.error) state.sawError = true;
  if (chunk.usageMetadata) state.usage = usageFromMetadata(chunk.usageMetadata);
  if (chunk.candidates?.some((candidate) => candidate.finishReason)) state.complete = true;
}

/** Usage of a generateContent answer: the last usageMetadata of the JSON body, the SSE events or the JSON array. */
export function geminiRelayMeter(operation: RelayOperation): RelayMeter {
  const state: RelayReading = { usage: undefined, complete: false, sawTerminator: false, sawError: false };
  if (operation === 'stream-generate-content-sse') {
    const parser = createParser({
      onEvent: (event) => {
        try {
          observe(state, JSON.parse(event.data) as GenerateContentChunk);
        } catch {
          // relayed as it came; carries no usage
        }
      },
    });
    const decoder = new TextDecoder();
    return { push: (chunk) => parser.feed(decoder.decode(chunk, { stream: true })), reading: () => ({ ...state }) };
  }
  const copy = new JsonCopy();
  return {
    push: (chunk) => copy.push(chunk),
    reading: () => {
      const answer = copy.parse();
      const reading = { ...state };
      for (const chunk of Array.isArray(answer) ? answer : answer === undefined ? [] : [answer]) observe(reading, chunk as GenerateContentChunk);
      // A whole non-streamed answer is complete even when a blocked prompt left it without candidates.
      if (operation === 'generate-content' && answer !== undefined && !reading.sawError) reading.complete = true;
      return reading;
    },
  };
}
