import type { ServerResponse } from 'node:http';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { fakeOpenAiKey } from './openai-fake.ts';

/**
 * An OpenAI upstream that misbehaves in the ways a gateway must survive, speaking the real chat-completions
 * and Responses wire formats (JSON, or SSE `data:` chunks ending in `[DONE]` / `response.completed`). The
 * model name picks the misbehaviour:
 * - `runaway`: ignores every output limit, writes `runawayWords` words and reports 5,000,000 output tokens;
 * - `cut`: three words, then the connection drops (no finish, no usage, no `[DONE]`);
 * - `endless`: a word every 50 ms until the gateway hangs up;
 * - `long-line`: an event line of `longLineBytes` bytes that never ends, then silence;
 * - `unlabeled-long-line`: the same, its answer sent without any content type;
 * - `endless-event`: from the start, one event of short `data:` lines that never ends (no blank line),
 *   `endlessEventBytes` of them.
 * `openConnections` counts the answers still being written, so a test can see the gateway hang up.
 */
export interface LyingFake extends FakeServer {
  openConnections(): number;
}

export const runawayWords = 20_000;
export const reportedRunawayTokens = 5_000_000;
export const longLineBytes = 1024 * 1024;
export const endlessEventBytes = 20 * 1024 * 1024;

interface Body {
  model: string;
  stream?: boolean;
  input?: unknown;
}

const base = { id: 'chatcmpl-lying', created: 1_723_031_664, system_fingerprint: 'fp_lying' };

function chatChunk(
  model: string,
  { delta, finishReason, usage }: { delta: object; finishReason: string | null; usage?: object },
): string {
  return `data: ${JSON.stringify({ ...base, model, object: 'chat.completion.chunk', choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], ...(usage ? { usage } : {}) })}\n\n`;
}

const runawayUsage = {
  prompt_tokens: 3,
  completion_tokens: reportedRunawayTokens,
  total_tokens: reportedRunawayTokens + 3,
};
const runawayText = Array.from({ length: runawayWords }, () => 'word').join(' ');

async function chat(body: Body, response: ServerResponse, alive: () => boolean): Promise<void> {
  if (!body.stream) {
    if (body.model !== 'runaway') throw new Error(`the lying fake streams ${body.model} only`);
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(
      JSON.stringify({
        ...base,
        model: body.model,
        object: 'chat.completion',
        choices: [
          {
            index: 0,
            message: { role: 'assistant', content: runawayText, refusal: null },
            logprobs: null,
            finish_reason: 'stop',
          },
        ],
        usage: runawayUsage,
      }),
    );
    return;
  }
  if (body.model === 'unlabeled-long-line') {
    response.writeHead(200);
    response.write(`data: {"pad":"${'a'.repeat(longLineBytes)}`);
    while (alive()) await sleep(50);
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  if (body.model !== 'endless-event')
    response.write(chatChunk(body.model, { delta: { role: 'assistant', content: '' }, finishReason: null }));
  switch (body.model) {
    case 'runaway':
      for (let index = 0; index < runawayWords; index += 1000)
        response.write(chatChunk(body.model, { delta: { content: ' word'.repeat(1000) }, finishReason: null }));
      response.write(chatChunk(body.model, { delta: {}, finishReason: 'stop' }));
      response.write(
        `data: ${JSON.stringify({ ...base, model: body.model, object: 'chat.completion.chunk', choices: [], usage: runawayUsage })}\n\n`,
      );
      response.end('data: [DONE]\n\n');
      return;
    case 'cut':
      for (const word of ['one', ' two', ' three'])
        response.write(chatChunk(body.model, { delta: { content: word }, finishReason: null }));
      await sleep(50);
      response.socket?.destroy();
      return;
    case 'endless':
      while (alive()) {
        response.write(chatChunk(body.model, { delta: { content: ' more' }, finishReason: null }));
        await sleep(50);
      }
      return;
    case 'endless-event': {
      const line = `data: ${'b'.repeat(1018)}\n`;
      for (let sent = 0; sent < endlessEventBytes && alive(); sent += line.length * 64) {
        if (!response.write(line.repeat(64))) await new Promise((resolve) => response.once('drain', resolve));
      }
      while (alive()) await sleep(50);
      return;
    }
    case 'long-line':
      response.write(`data: {"pad":"${'a'.repeat(longLineBytes)}`);
      while (alive()) await sleep(50);
      return;
    default:
      throw new Error(`unknown lying model ${body.model}`);
  }
}

/** The Responses API of `runaway`: the whole text and a usage of five million output tokens. */
function responses(body: Body, response: ServerResponse): void {
  const usage = {
    input_tokens: 3,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: reportedRunawayTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: reportedRunawayTokens + 3,
  };
  const message = {
    id: 'msg_lying',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: runawayText, annotations: [] }],
  };
  const whole = {
    id: 'resp_lying',
    object: 'response',
    created_at: 1_741_476_542,
    model: body.model,
    status: 'completed',
    error: null,
    incomplete_details: null,
    output: [message],
    usage,
  };
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(whole));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const send = (type: string, data: object) =>
    response.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  send('response.created', { response: { ...whole, status: 'in_progress', output: [], usage: null } });
  for (let index = 0; index < runawayWords; index += 1000)
    send('response.output_text.delta', {
      item_id: 'msg_lying',
      output_index: 0,
      content_index: 0,
      delta: ' word'.repeat(1000),
      logprobs: [],
    });
  send('response.completed', { response: whole });
  response.end();
}

export async function startLyingOpenAiFake(): Promise<LyingFake> {
  let open = 0;
  const fake = await startFakeServer(async (request: RecordedRequest, response: ServerResponse) => {
    if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
      response.writeHead(401, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          error: {
            message: 'Incorrect API key provided',
            type: 'invalid_request_error',
            param: null,
            code: 'invalid_api_key',
          },
        }),
      );
      return;
    }
    let closed = false;
    open++;
    response.on('close', () => {
      closed = true;
      open--;
    });
    const body = request.body as Body;
    if (request.path === '/v1/responses') return responses(body, response);
    await chat(body, response, () => !closed);
  });
  return { ...fake, openConnections: () => open };
}
