import type { ServerResponse } from 'node:http';
import type { MessagesStreamEvent } from '../../src/protocols/anthropic/messages.ts';
import type { GenerateContentResponse } from '../../src/protocols/gemini/generate-content.ts';
import type { ChatCompletionChunk } from '../../src/protocols/openai/chat-completions.ts';
import type { ResponsesStreamEvent } from '../../src/protocols/openai/responses.ts';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';

/**
 * An upstream of any protocol that answers 200 with something its protocol does not allow; the model name
 * (the body's `model`, or the path's for Gemini) picks what:
 * - `garbage-not-json`: the body `{not json at all`;
 * - `garbage-html`: an HTML maintenance page;
 * - `garbage-shape`: JSON of another shape, as the whole answer, or as the events of a stream that then ends
 *   as the protocol ends a stream;
 * - `garbage-first-event`: a stream whose first event is not JSON;
 * - `garbage-second-event`: a stream whose first write holds one of the protocol's own events and then one
 *   that is not JSON (both arrive before the answer can begin);
 * - `garbage-second-event-later`: the same, after a first write of no event (a keep-alive comment, or the
 *   array's opening bracket);
 * - `garbage-third-event`: a stream of two of the protocol's own events carrying text, then one that is not
 *   JSON, then more of its own events;
 * - `garbage-endless`: like `third-event`, but after the garbage it keeps sending its own events until the
 *   gateway lets go of the connection (counted in `streamsLetGo`);
 * - `garbage-cut`: an answer begun as its protocol's own (a stream's first two events carrying text, or the
 *   start of a JSON body), then, as a later piece would come, the connection drops.
 */
export const garbageKinds = [
  'not-json',
  'html',
  'shape',
  'first-event',
  'second-event',
  'second-event-later',
  'third-event',
  'endless',
  'cut',
] as const;
export type GarbageKind = (typeof garbageKinds)[number];

const html = '<!doctype html><html><head><title>Maintenance</title></head><body><h1>Back soon</h1></body></html>';

/**
 * How long the garbage of a stream waits after its first events, to come as a later piece: the gateway reads
 * everything that came with a stream's first event before the answer begins, so garbage read with it (a
 * gateway busy for this long, as on a loaded CI machine) would fail the request instead of the stream.
 */
const laterPieceMs = 300;

type Operation = 'chat' | 'responses' | 'messages' | 'generate' | 'embeddings';

/** Two well-formed events of each streamed operation, each carrying a word of text. */
function goodEvents(operation: Operation): Array<{ name?: string; data: object }> {
  if (operation === 'chat') {
    const chunk = (content: string): ChatCompletionChunk => ({
      choices: [{ delta: { content }, finish_reason: null }],
      usage: null,
    });
    return [
      { data: { id: 'chatcmpl-g', object: 'chat.completion.chunk', ...chunk('Hello') } },
      { data: { id: 'chatcmpl-g', object: 'chat.completion.chunk', ...chunk(' there') } },
    ];
  }
  if (operation === 'responses') {
    const events: ResponsesStreamEvent[] = [
      { type: 'response.created', response: { usage: null } },
      { type: 'response.output_text.delta' },
    ];
    return events.map((event) => ({
      name: event.type,
      data: event.type === 'response.output_text.delta' ? { ...event, delta: 'Hello' } : event,
    }));
  }
  if (operation === 'messages') {
    const events: MessagesStreamEvent[] = [
      { type: 'message_start', message: { usage: { input_tokens: 3, output_tokens: 1 } } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hello' } },
    ];
    return events.map((event) => ({ name: event.type, data: event }));
  }
  const chunk = (text: string): GenerateContentResponse => ({ candidates: [{ content: { parts: [{ text }] } }] });
  return [{ data: chunk('Hello') }, { data: chunk(' there') }];
}

/** The event a stream of the operation ends with. */
function endEvent(operation: Operation): { name?: string; data: object | string } {
  if (operation === 'chat') return { data: '[DONE]' };
  if (operation === 'responses')
    return {
      name: 'response.completed',
      data: { type: 'response.completed', response: { usage: { input_tokens: 1, output_tokens: 1 } } },
    };
  if (operation === 'messages') return { name: 'message_stop', data: { type: 'message_stop' } };
  const last: GenerateContentResponse = { candidates: [{ content: { parts: [{ text: '' }] }, finishReason: 'STOP' }] };
  return { data: last };
}

function operationOf(request: RecordedRequest): { operation: Operation; model: string; streaming: boolean } {
  const body = (request.body ?? {}) as { model?: unknown; stream?: unknown };
  const gemini = /\/models\/([^:]+):(\w+)/.exec(request.path);
  if (gemini) {
    const action = gemini[2]!;
    return {
      operation: action.includes('mbed') ? 'embeddings' : 'generate',
      model: decodeURIComponent(gemini[1]!),
      streaming: action === 'streamGenerateContent',
    };
  }
  const operation: Operation = request.path.endsWith('/chat/completions')
    ? 'chat'
    : request.path.endsWith('/responses')
      ? 'responses'
      : request.path.endsWith('/messages')
        ? 'messages'
        : 'embeddings';
  return { operation, model: String(body.model), streaming: body.stream === true };
}

const sse = (event: { name?: string; data: object | string }) =>
  `${event.name ? `event: ${event.name}\n` : ''}data: ${typeof event.data === 'string' ? event.data : JSON.stringify(event.data)}\n\n`;

async function answer(request: RecordedRequest, response: ServerResponse): Promise<void> {
  const { operation, model, streaming } = operationOf(request);
  const kind = model.replace(/^garbage-/, '') as GarbageKind;
  if (kind === 'not-json') {
    response.writeHead(200, { 'content-type': 'application/json' });
    return void response.end('{not json at all');
  }
  if (kind === 'html') {
    response.writeHead(200, { 'content-type': 'text/html' });
    return void response.end(html);
  }
  // The stream without alt=sse is a JSON array, whatever it holds.
  const jsonArray = operation === 'generate' && streaming && !request.path.includes('alt=sse');
  if (kind === 'cut') return cut(response, { operation, streaming, jsonArray });
  if (!streaming || operation === 'embeddings') {
    response.writeHead(200, { 'content-type': 'application/json' });
    return void response.end(JSON.stringify({ hello: 'world' }));
  }
  const [first, second] = goodEvents(operation);
  if (jsonArray) {
    response.writeHead(200, { 'content-type': 'application/json' });
    if (kind === 'shape') return void response.end(JSON.stringify([{ hello: 'world' }, endEvent(operation).data]));
    if (kind === 'first-event') return void response.end(`[{not json},${JSON.stringify(first!.data)}]`);
    if (kind === 'second-event') return void response.end(`[${JSON.stringify(first!.data)},{not json}]`);
    if (kind === 'second-event-later') {
      response.write('[');
      await sleep(50);
      return void response.end(`${JSON.stringify(first!.data)},{not json}]`);
    }
    response.write(`[${JSON.stringify(first!.data)},\r\n${JSON.stringify(second!.data)}`);
    // The garbage comes after the answer has begun, as a later piece of the stream.
    await sleep(laterPieceMs);
    return void response.end(',\r\n{"hello": "world"}]');
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  if (kind === 'shape')
    return void response.end(
      sse({ data: { hello: 'world' } }) + sse({ data: { hello: 'again' } }) + sse(endEvent(operation)),
    );
  if (kind === 'first-event')
    return void response.end(sse({ data: '{not json' }) + goodEvents(operation).map(sse).join(''));
  if (kind === 'second-event') return void response.end(sse(first!) + sse({ data: '{not json' }) + sse(second!));
  if (kind === 'second-event-later') {
    response.write(': keep-alive\n\n');
    await sleep(50);
    return void response.end(sse(first!) + sse({ data: '{not json' }) + sse(second!));
  }
  response.write([first!, second!].map(sse).join(''));
  await sleep(laterPieceMs);
  if (kind !== 'endless') return void response.end(sse({ data: html }) + sse(first!));
  response.write(sse({ data: html }));
  let open = true;
  response.on('close', () => {
    open = false;
    state.streamsLetGo++;
  });
  while (open) {
    response.write(sse(second!));
    await sleep(20);
  }
}

/** The `cut` answer: its protocol's own beginning, then the connection drops before the end. */
async function cut(
  response: ServerResponse,
  { operation, streaming, jsonArray }: { operation: Operation; streaming: boolean; jsonArray: boolean },
): Promise<void> {
  const [first, second] = goodEvents(operation);
  if (!streaming || operation === 'embeddings') {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write('{"id": "cut-answer", "choices": [');
  } else if (jsonArray) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.write(`[${JSON.stringify(first!.data)},\r\n${JSON.stringify(second!.data)}`);
  } else {
    response.writeHead(200, { 'content-type': 'text/event-stream' });
    response.write([first!, second!].map(sse).join(''));
  }
  await sleep(laterPieceMs);
  response.socket?.destroy();
}

const state = { streamsLetGo: 0 };

export async function startGarbageFake(): Promise<FakeServer & { streamsLetGo(): number }> {
  return { ...(await startFakeServer(answer)), streamsLetGo: () => state.streamsLetGo };
}
