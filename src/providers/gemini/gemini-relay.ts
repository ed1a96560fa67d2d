import { DeliveredOutput } from '../../domain/delivered-output.ts';
import {
  blockedPromptFinish,
  generateContentReadsServerInput,
  isGenerateContentResponse,
  usageFromMetadata,
  type GenerateContentResponse,
} from '../../protocols/gemini/generate-content.ts';
import type {
  CallOptions,
  RawExchange,
  RelayMeter,
  RelayMeterOptions,
  RelayOperation,
  RelayReading,
  RelayRequest,
} from '../provider-adapter.ts';
import { checkedRelay } from '../shared/checked-relay.ts';
import { jsonRelayMeter, streamRelayMeter } from '../shared/relay-meters.ts';
import { jsonArraySplitter, sseSplitter } from '../shared/stream-splitters.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { geminiPath } from './gemini-content.ts';

const actions: Partial<Record<RelayOperation, string>> = {
  'generate-content': 'generateContent',
  'stream-generate-content-sse': 'streamGenerateContent?alt=sse',
  'stream-generate-content-json': 'streamGenerateContent',
};

export async function relayGemini(
  http: UpstreamHttp,
  { operation, upstreamModel, body }: RelayRequest,
  options: CallOptions,
): Promise<RawExchange> {
  const action = actions[operation];
  if (!action) throw new Error(`the Gemini protocol has no ${operation} operation`);
  const response = await http.postJson(options.target, {
    path: geminiPath(upstreamModel, action),
    headers: { 'x-goog-api-key': options.target.apiKey },
    body,
  });
  const limit = options.target.maxEventCharacters;
  const stream =
    operation === 'generate-content'
      ? undefined
      : operation === 'stream-generate-content-sse'
        ? sseSplitter(limit)
        : jsonArraySplitter(limit);
  return {
    ...(await checkedRelay(
      response,
      { answer: isGenerateContentResponse, event: isGenerateContentResponse, what: 'a generateContent answer' },
      stream && { split: stream, meteredHead: true },
    )),
    ...(generateContentReadsServerInput(body) ? { unseenInput: true } : {}),
  };
}

/** The JSON of a call's arguments, for counting; arguments too deep to write count as none (the hold still caps the charge). */
function argumentsText(args: unknown): string {
  try {
    return JSON.stringify(args) ?? '';
  } catch {
    return '';
  }
}

function observe(reading: RelayReading, chunk: GenerateContentResponse): void {
  if (chunk.error) reading.sawError = true;
  for (const part of chunk.candidates?.flatMap((candidate) => candidate.content?.parts ?? []) ?? []) {
    if (part.text !== undefined) reading.output.add(part.text);
    if (part.functionCall) reading.output.add(part.functionCall.name + argumentsText(part.functionCall.args));
  }
  if (chunk.usageMetadata) reading.usage = usageFromMetadata(chunk.usageMetadata);
  if (chunk.candidates?.some((candidate) => candidate.finishReason) || blockedPromptFinish(chunk))
    reading.complete = true;
}

/** Usage of a generateContent answer: the last usageMetadata of the JSON body, the SSE events or the JSON array's elements. */
export function geminiRelayMeter(
  operation: RelayOperation,
  { maxEventCharacters, limit, servedAs, whole }: RelayMeterOptions,
): RelayMeter {
  if (operation === 'stream-generate-content-sse' || operation === 'stream-generate-content-json') {
    const sse = operation === 'stream-generate-content-sse';
    // What a cut stream's last chunk repeats of the others, and the candidates still open (several with
    // `candidateCount`), each of which the cut ends.
    const last: Pick<GenerateContentResponse, 'usageMetadata' | 'modelVersion' | 'responseId'> = {};
    const open = new Set<number>();
    return streamRelayMeter(
      {
        split: sse ? sseSplitter(maxEventCharacters) : jsonArraySplitter(maxEventCharacters),
        check: isGenerateContentResponse,
        observe,
        follow: (chunk) => {
          for (const [position, candidate] of (chunk.candidates ?? []).entries()) {
            const index = candidate.index ?? position;
            if (candidate.finishReason) open.delete(index);
            else open.add(index);
          }
          last.usageMetadata = chunk.usageMetadata ?? last.usageMetadata;
          last.modelVersion = chunk.modelVersion ?? last.modelVersion;
          last.responseId = chunk.responseId ?? last.responseId;
        },
        lengthFinish: () => {
          const chunk = JSON.stringify({
            candidates: [...(open.size > 0 ? [...open].sort((a, b) => a - b) : [0])].map((index) => ({
              content: { role: 'model', parts: [{ text: '' }] },
              finishReason: 'MAX_TOKENS',
              index,
            })),
            ...last,
          });
          // The array's elements so far were relayed, the first among them: this one follows them and closes it.
          return sse ? `data: ${chunk}\r\n\r\n` : `,\r\n${chunk}]`;
        },
      },
      { limit, servedAs },
    );
  }
  return jsonRelayMeter(
    isGenerateContentResponse,
    (answer) => {
      const reading: RelayReading = {
        usage: undefined,
        complete: false,
        sawTerminator: false,
        sawError: false,
        output: new DeliveredOutput(),
      };
      observe(reading, answer);
      // A whole non-streamed answer is complete even when a blocked prompt left it without candidates.
      if (!reading.sawError) reading.complete = true;
      return reading;
    },
    {
      limit,
      servedAs,
      alreadyRead: whole,
      lengthFinished: (answer) => ({
        ...answer,
        candidates: answer.candidates?.map((candidate) => ({ ...candidate, finishReason: 'MAX_TOKENS' })),
      }),
    },
  );
}
