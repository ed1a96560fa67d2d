import type { ServerResponse } from 'node:http';
import type { ChatCompletion, ChatCompletionChunk } from '../../src/protocols/openai/chat-completions.ts';
import type { ResponseObject, ResponsesStreamEvent } from '../../src/protocols/openai/responses.ts';
import type { Message, MessagesStreamEvent } from '../../src/protocols/anthropic/messages.ts';
import type { GenerateContentResponse } from '../../src/protocols/gemini/generate-content.ts';
import { startFakeServer, type FakeServer } from './fake-server.ts';
import { sseEvent, writeJson } from './wire.ts';

/** One exchange the runaway upstream served: how many output events it wrote, and whether its client closed it. */
export interface RunawayExchange {
  path: string;
  written: number;
  closedEarly: boolean;
}

export interface RunawayUpstream extends FakeServer {
  exchanges: RunawayExchange[];
}

/** Milliseconds between two output events of a stream. */
const eventIntervalMs = 10;
/** Words of a non-streamed answer: far past any output limit the tests send. */
const answerWords = 400;
export const runawayWord = 'word ';

/**
 * An upstream of every text protocol (OpenAI chat completions and Responses under `/v1`, Anthropic messages
 * under `/v1`, Gemini generateContent under `/v1beta`) that ignores the output limit it is sent: a stream
 * writes one word per event, every 10 ms, for as long as its client keeps the exchange open (Gemini's reports
 * its running usage; the others report none until an end that never comes); a whole answer carries 400 words
 * and reports them as its usage. Each exchange records the output events it wrote and whether it was closed
 * by its client before it ended.
 */
export async function startRunawayUpstream(): Promise<RunawayUpstream> {
  const exchanges: RunawayExchange[] = [];
  const server = await startFakeServer((request, response) => {
    const body = request.body as { stream?: boolean; model?: string };
    const model = body.model ?? 'runaway';
    const exchange: RunawayExchange = { path: request.path, written: 0, closedEarly: false };
    exchanges.push(exchange);
    const gemini = /^\/v1beta\/models\/([^:]+):(\w+)/.exec(request.path);
    if (gemini) {
      if (gemini[2] === 'generateContent')
        return writeJson<GenerateContentResponse>(response, { status: 200, body: geminiAnswer() });
      const sse = request.path.includes('alt=sse');
      return stream(response, exchange, {
        contentType: 'application/json',
        opening: sse ? '' : '[',
        event: (index) => {
          const chunk: GenerateContentResponse = {
            candidates: [{ content: { parts: [{ text: runawayWord }] } }],
            usageMetadata: { promptTokenCount: 3, candidatesTokenCount: index + 1 },
          };
          return sse
            ? `data: ${JSON.stringify(chunk)}\r\n\r\n`
            : `${index === 0 ? '' : ',\r\n'}${JSON.stringify(chunk)}`;
        },
      });
    }
    if (request.path === '/v1/chat/completions') {
      if (!body.stream) return writeJson<ChatCompletion>(response, { status: 200, body: chatAnswer(model) });
      return stream(response, exchange, {
        contentType: 'text/event-stream',
        opening: '',
        event: () =>
          sseEvent<ChatCompletionChunk>({
            id: 'chatcmpl-runaway',
            created: 1,
            model,
            choices: [{ index: 0, delta: { content: runawayWord }, finish_reason: null }],
          }),
      });
    }
    if (request.path === '/v1/responses') {
      if (!body.stream) return writeJson<ResponseObject>(response, { status: 200, body: responseAnswer(model) });
      const created: ResponsesStreamEvent = {
        type: 'response.created',
        sequence_number: 0,
        response: { id: 'resp_runaway', created_at: 1, model, usage: null },
      };
      const item = { id: 'msg_runaway', type: 'message', role: 'assistant', status: 'in_progress', content: [] };
      const added: ResponsesStreamEvent = {
        type: 'response.output_item.added',
        sequence_number: 1,
        output_index: 0,
        item,
      };
      const opened = sseEvent(created, created.type) + sseEvent(added, added.type);
      return stream(response, exchange, {
        contentType: 'text/event-stream',
        opening: opened,
        event: (index) => {
          const delta = {
            type: 'response.output_text.delta',
            sequence_number: index + 2,
            item_id: item.id,
            output_index: 0,
            content_index: 0,
            delta: runawayWord,
          };
          return sseEvent<ResponsesStreamEvent>(delta, delta.type);
        },
      });
    }
    if (request.path === '/v1/messages') {
      if (!body.stream) return writeJson<Message>(response, { status: 200, body: messageAnswer(model) });
      const opened =
        sseEvent<MessagesStreamEvent>(
          { type: 'message_start', message: { usage: { input_tokens: 3, output_tokens: 1 } } },
          'message_start',
        ) +
        sseEvent<MessagesStreamEvent>(
          { type: 'content_block_start', index: 0, content_block: { type: 'text' } },
          'content_block_start',
        );
      return stream(response, exchange, {
        contentType: 'text/event-stream',
        opening: opened,
        event: () =>
          sseEvent<MessagesStreamEvent>(
            { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: runawayWord } },
            'content_block_delta',
          ),
      });
    }
    writeJson(response, { status: 404, body: { error: { message: `Not found: ${request.path}` } } });
  });
  return { ...server, exchanges };
}

/** Writes `opening`, then `event(n)` every few milliseconds until the client closes the exchange. */
function stream(
  response: ServerResponse,
  exchange: RunawayExchange,
  { contentType, opening, event }: { contentType: string; opening: string; event: (index: number) => string },
): void {
  response.writeHead(200, { 'content-type': contentType });
  if (opening) response.write(opening);
  const timer = setInterval(() => {
    response.write(event(exchange.written));
    exchange.written++;
  }, eventIntervalMs);
  response.on('close', () => {
    clearInterval(timer);
    exchange.closedEarly = !response.writableEnded;
  });
}

const longText = runawayWord.repeat(answerWords);

const chatAnswer = (model: string) => ({
  id: 'chatcmpl-runaway',
  object: 'chat.completion',
  created: 1,
  model,
  choices: [{ index: 0, message: { role: 'assistant', content: longText }, finish_reason: 'stop' }],
  usage: { prompt_tokens: 3, completion_tokens: answerWords, total_tokens: 3 + answerWords },
});

const responseAnswer = (model: string) => ({
  id: 'resp_runaway',
  object: 'response' as const,
  created_at: 1,
  model,
  status: 'completed',
  output: [{ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: longText }] }],
  usage: { input_tokens: 3, output_tokens: answerWords },
});

const messageAnswer = (model: string) => ({
  id: 'msg_runaway',
  type: 'message' as const,
  role: 'assistant',
  model,
  content: [{ type: 'text', text: longText }],
  stop_reason: 'end_turn',
  usage: { input_tokens: 3, output_tokens: answerWords },
});

const geminiAnswer = (): GenerateContentResponse => ({
  candidates: [{ content: { parts: [{ text: longText }] }, finishReason: 'STOP' }],
  usageMetadata: { promptTokenCount: 3, candidatesTokenCount: answerWords },
});
