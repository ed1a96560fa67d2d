import type { ServerResponse } from 'node:http';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';

/**
 * A fake OpenAI upstream speaking the real chat-completions wire format (see the OpenAI wire notes): JSON or
 * SSE `data:` chunks (role chunk, content chunks, finish chunk, usage chunk when include_usage, `[DONE]`),
 * and the provider's error body. The model name picks the scenario:
 * - `fake-error-<status>`: that status with an OpenAI error body (429 carries retry-after);
 * - `fake-cut`: the stream stops after two content chunks, with no finish and no [DONE];
 * - `fake-slow`: 200 ms between chunks;
 * - `fake-no-usage`: never reports usage;
 * - `fake-no-done`: a complete stream that leaves out the final `data: [DONE]` (some compatible servers do);
 * anything else answers "Echo: <last user message>", one word per chunk.
 */
export const fakeOpenAiKey = 'sk-fake-openai-key';

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
}

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

function sendError(response: ServerResponse, status: number, type: string, message: string, code: string | null, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

async function chatCompletions(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    return sendError(response, 401, 'invalid_request_error', 'Incorrect API key provided', 'invalid_api_key');
  }
  const body = request.body as ChatBody;
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure) {
    const status = Number(failure[1]);
    if (status === 429) return sendError(response, 429, 'rate_limit_error', 'Rate limit reached for requests', 'rate_limit_exceeded', { 'retry-after': '1' });
    return sendError(response, status, status >= 500 ? 'server_error' : 'invalid_request_error', `The fake failed with ${status}`, null);
  }
  const prompt = body.messages.filter((message) => message.role === 'user').at(-1)?.content ?? '';
  let words = wordsOf(`Echo: ${prompt}`);
  let finishReason = 'stop';
  if (body.max_tokens !== undefined && words.length > body.max_tokens) {
    words = words.slice(0, body.max_tokens);
    finishReason = 'length';
  }
  const usage = { prompt_tokens: body.messages.reduce((sum, message) => sum + wordsOf(message.content).length, 0), completion_tokens: words.length };
  const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  const base = { id: 'chatcmpl-fake1', created: 1_723_031_664, model: `${body.model}-2024-08-06`, system_fingerprint: 'fp_fake' };
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json', 'x-request-id': 'req_fake' });
    response.end(
      JSON.stringify({
        ...base,
        object: 'chat.completion',
        choices: [{ index: 0, message: { role: 'assistant', content: words.join(' '), refusal: null, annotations: [] }, logprobs: null, finish_reason: finishReason }],
        ...(body.model === 'fake-no-usage' ? {} : { usage: fullUsage }),
      }),
    );
    return;
  }
  const includeUsage = body.stream_options?.include_usage === true && body.model !== 'fake-no-usage';
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
  const send = (choices: unknown[], extra: Record<string, unknown> = {}) =>
    response.write(`data: ${JSON.stringify({ ...base, object: 'chat.completion.chunk', choices, ...(includeUsage ? { usage: null } : {}), ...extra })}\n\n`);
  send([{ index: 0, delta: { role: 'assistant', content: '', refusal: null }, logprobs: null, finish_reason: null }]);
  for (const [index, word] of words.entries()) {
    if (body.model === 'fake-cut' && index === 2) {
      // Let what was written reach the client first, as a real connection dropping mid-answer would.
      await sleep(50);
      response.socket?.destroy();
      return;
    }
    if (body.model === 'fake-slow') await sleep(200);
    send([{ index: 0, delta: { content: index === 0 ? word : ` ${word}` }, logprobs: null, finish_reason: null }]);
  }
  send([{ index: 0, delta: {}, logprobs: null, finish_reason: finishReason }]);
  if (includeUsage) send([], { usage: fullUsage });
  response.end(body.model === 'fake-no-done' ? undefined : 'data: [DONE]\n\n');
}

export function startOpenAiFake(): Promise<FakeServer> {
  return startFakeServer(async (request, response) => {
    if (request.method === 'POST' && request.path === '/v1/chat/completions') return chatCompletions(request, response);
    if (request.method === 'GET' && request.path === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_686_935_002, owned_by: 'openai' }] }));
      return;
    }
    sendError(response, 404, 'invalid_request_error', `Invalid URL (${request.method} ${request.path})`, 'unknown_url');
  });
}
