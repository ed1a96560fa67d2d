import type { ServerResponse } from 'node:http';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';

/**
 * A fake OpenAI upstream speaking the real chat-completions wire format (see the OpenAI wire notes): JSON or
 * SSE `data:` chunks (role chunk, content chunks, finish chunk, usage chunk when include_usage, `[DONE]`),
 * and the provider's error body. The model name picks the scenario:
 * - `fake-error-<status>`: that status with an OpenAI error body (429 carries retry-after);
 * - `fake-cut`: the stream stops after two content chunks, with no finish and no [DONE];
 * - `fake-slow`: 200 ms between chunks;
 * - `fake-slow-start`: 300 ms before the answer's headers;
 * - `fake-no-usage`: never reports usage;
 * - `fake-no-done`: a complete stream that leaves out the final `data: [DONE]` (some compatible servers do);
 * anything else answers "Echo: <last user message>", one word per chunk.
 */
export const fakeOpenAiKey = 'sk-fake-openai-key';

interface ChatBody {
  model: string;
  messages: Array<{ role: string; content: string | Array<{ type: string; text?: string }> }>;
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  max_tokens?: number;
}

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);
/** The text of a message's content, string or parts; image parts carry no words. */
const contentText = (content: string | Array<{ type: string; text?: string }>) =>
  typeof content === 'string' ? content : content.map((part) => (part.type === 'text' ? (part.text ?? '') : '')).join(' ');

function sendError(response: ServerResponse, status: number, type: string, message: string, code: string | null, headers: Record<string, string> = {}): void {
  response.writeHead(status, { 'content-type': 'application/json', ...headers });
  response.end(JSON.stringify({ error: { message, type, param: null, code } }));
}

async function chatCompletions(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    return sendError(response, 401, 'invalid_request_error', 'Incorrect API key provided', 'invalid_api_key');
  }
  const body = request.body as ChatBody;
  if (body.model === 'fake-slow-start') await sleep(300);
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure) {
    const status = Number(failure[1]);
    if (status === 429) return sendError(response, 429, 'rate_limit_error', 'Rate limit reached for requests', 'rate_limit_exceeded', { 'retry-after': '1' });
    return sendError(response, status, status >= 500 ? 'server_error' : 'invalid_request_error', `The fake failed with ${status}`, null);
  }
  const lastUser = body.messages.filter((message) => message.role === 'user').at(-1);
  const prompt = lastUser ? contentText(lastUser.content) : '';
  let words = wordsOf(`Echo: ${prompt}`);
  let finishReason = 'stop';
  if (body.max_tokens !== undefined && words.length > body.max_tokens) {
    words = words.slice(0, body.max_tokens);
    finishReason = 'length';
  }
  const usage = { prompt_tokens: body.messages.reduce((sum, message) => sum + wordsOf(contentText(message.content)).length, 0), completion_tokens: words.length };
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

interface ResponsesBody {
  model: string;
  input: string | Array<{ role?: string; content?: string | Array<{ text?: string }> }>;
  instructions?: string;
  stream?: boolean;
}

/** The Responses API: a Response object, or named events with sequence numbers ending at response.completed. */
async function responses(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    return sendError(response, 401, 'invalid_request_error', 'Incorrect API key provided', 'invalid_api_key');
  }
  const body = request.body as ResponsesBody;
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure) return sendError(response, Number(failure[1]), 'server_error', `The fake failed with ${failure[1]}`, null);
  const items = typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const textOf = (content: string | Array<{ text?: string }> | undefined) => (typeof content === 'string' ? content : (content ?? []).map((part) => part.text ?? '').join(''));
  const last = items.filter((item) => item.role === 'user').at(-1);
  const words = wordsOf(`Echo: ${textOf(last?.content)}`);
  const usage = {
    input_tokens: items.reduce((sum, item) => sum + wordsOf(textOf(item.content)).length, 0) + wordsOf(body.instructions ?? '').length,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: words.length,
    output_tokens_details: { reasoning_tokens: 0 },
  };
  const message = { id: 'msg_fake1', type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: words.join(' '), annotations: [] }] };
  const base = { id: 'resp_fake1', object: 'response', created_at: 1_741_476_542, model: `${body.model}-2025-04-14`, error: null, incomplete_details: null };
  const whole = { ...base, status: 'completed', output: [message], usage: { ...usage, total_tokens: usage.input_tokens + usage.output_tokens } };
  if (!body.stream) {
    response.writeHead(200, { 'content-type': 'application/json' });
    response.end(JSON.stringify(whole));
    return;
  }
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const send = (type: string, data: object) => response.write(`event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: sequence++, ...data })}\n\n`);
  const inProgress = { ...base, status: 'in_progress', output: [], usage: null };
  send('response.created', { response: inProgress });
  send('response.in_progress', { response: inProgress });
  send('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } });
  send('response.content_part.added', { item_id: 'msg_fake1', output_index: 0, content_index: 0, part: { type: 'output_text', text: '', annotations: [] } });
  for (const [index, word] of words.entries()) {
    send('response.output_text.delta', { item_id: 'msg_fake1', output_index: 0, content_index: 0, delta: index === 0 ? word : ` ${word}`, logprobs: [] });
  }
  send('response.output_text.done', { item_id: 'msg_fake1', output_index: 0, content_index: 0, text: words.join(' '), logprobs: [] });
  send('response.content_part.done', { item_id: 'msg_fake1', output_index: 0, content_index: 0, part: message.content[0]! });
  send('response.output_item.done', { output_index: 0, item: message });
  send('response.completed', { response: whole });
  response.end();
}

export function startOpenAiFake(): Promise<FakeServer> {
  return startFakeServer(async (request, response) => {
    if (request.method === 'POST' && request.path === '/v1/chat/completions') return chatCompletions(request, response);
    if (request.method === 'POST' && request.path === '/v1/responses') return responses(request, response);
    if (request.method === 'GET' && request.path === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ object: 'list', data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_686_935_002, owned_by: 'openai' }] }));
      return;
    }
    sendError(response, 404, 'invalid_request_error', `Invalid URL (${request.method} ${request.path})`, 'unknown_url');
  });
}
