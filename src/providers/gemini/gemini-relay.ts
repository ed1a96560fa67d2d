import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayReading, RelayRequest } from '../provider-adapter.ts';
import { jsonRelayMeter, sseRelayMeter } from '../shared/relay-meters.ts';
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

function observe(reading: RelayReading, chunk: GenerateContentChunk): void {
  if (chunk.error) reading.sawError = true;
  if (chunk.usageMetadata) reading.usage = usageFromMetadata(chunk.usageMetadata);
  if (chunk.candidates?.some((candidate) => candidate.finishReason)) reading.complete = true;
}

/** Usage of a generateContent answer: the last usageMetadata of the JSON body, the SSE events or the JSON array. */
export function geminiRelayMeter(operation: RelayOperation): RelayMeter {
  if (operation === 'stream-generate-content-sse') {
    return sseRelayMeter<GenerateContentChunk>((reading, chunk) => {
      if (chunk) observe(reading, chunk);
    });
  }
  return jsonRelayMeter<GenerateContentChunk | GenerateContentChunk[]>((answer) => {
    const reading: RelayReading = { usage: undefined, complete: false, sawTerminator: false, sawError: false };
    for (const chunk of Array.isArray(answer) ? answer : [answer]) observe(reading, chunk);
    // A whole non-streamed answer is complete even when a blocked prompt left it without candidates.
    if (operation === 'generate-content' && !reading.sawError) reading.complete = true;
    return reading;
  });
}
