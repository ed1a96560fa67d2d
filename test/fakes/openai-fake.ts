import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import {
  ChatCompletionsRequest,
  InputAudioPart,
  isChatFunctionCall as isFunctionCall,
  type ChatFunctionCall,
  isChatFunctionTool,
  isChatJsonSchemaFormat,
  isChatNamedToolChoice,
  isChatTextPart,
  strictRefusedKeywords,
  wireLogprobs,
  type ChatCompletion,
  type ChatCompletionChunk,
  type OpenAiError,
} from '../../src/protocols/openai/chat-completions.ts';
import { EmbeddingsRequest, type EmbeddingsAnswer } from '../../src/protocols/openai/embeddings.ts';
import {
  isFunctionCallOutputItem,
  isItemReference,
  isResponsesFunctionTool,
  isResponsesJsonSchemaFormat,
  isResponsesMessageItem,
  isResponsesTextPart,
  ResponsesRequest,
  type ResponseObject,
  type ResponsesInputItem,
  type ResponsesMessageItem,
  type ResponsesStreamEvent,
} from '../../src/protocols/openai/responses.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import { findSchemaObject, type SchemaObject } from '../../src/domain/json-schema.ts';
import { ImagesGenerateRequest, type ImagesAnswer, type ImagesStreamEvent } from '../../src/protocols/openai/images.ts';
import { delayFor, fakePng, notAnImagePage, scenarioOf } from './fake-images.ts';
import { fakeVector, sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { fakeTokenLogprob } from './fake-logprobs.ts';
import { jsonAnswer, toolArguments } from './structured-answer.ts';
import { sseEvent, writeJson } from './wire.ts';

/**
 * A fake OpenAI upstream speaking the real chat-completions wire format (see the OpenAI wire notes): JSON or
 * SSE `data:` chunks (role chunk, content chunks, finish chunk, usage chunk when include_usage, `[DONE]`),
 * and the provider's error body. The model name picks the scenario:
 * - `fake-error-<status>`: that status with an OpenAI error body (429 carries retry-after);
 * - `fake-cut`: the stream stops after two content chunks (Responses: two text deltas), with no finish and no
 *   [DONE], the connection dropped;
 * - `fake-slow`: 200 ms between chunks;
 * - `fake-drip-<ms>-<n>`: a slow generation of n words ("tick"), one content chunk every <ms> milliseconds
 *   (streamed), or the whole answer after n × <ms> (not streamed), with the usual framing and usage;
 * - `fake-slow-start`: 300 ms before the answer's headers;
 * - `fake-no-usage`: never reports usage;
 * - `fake-no-done`: a complete stream that leaves out the final `data: [DONE]` (some compatible servers do);
 * - `fake-null-answer` (embeddings): 200 with the JSON body `null`, as a broken compatible server may answer;
 * - `fake-refusal`: the model refuses: its words in `refusal` (streamed as `delta.refusal`), `content` null,
 *   finished with `stop`;
 * - `fake-calls-<mode>`: tool calls streamed as a named OpenAI-compatible server streams them (`CallStreaming`),
 *   one call per part of a prompt joined by " and ";
 * anything else answers "Echo: <last user message>", one word per chunk; asked for JSON (`response_format`), that
 * text inside a value of the schema (structured-answer.ts); with `n`, that many identical choices, each billed;
 * with `logprobs`, each word's log probability (`top_logprobs` alternatives). An answer format the real API
 * refuses is refused in its words (JSON mode without "json" in the messages, a schema whose root is not an
 * object, a strict schema or strict function whose root object is open), as is a tool call id longer than 40
 * characters. With function tools (and a tool_choice other than "none") it calls the chosen or first tool with
 * arguments that follow its parameters' schema, strings the last user text (structured-answer.ts), streaming the
 * arguments in two fragments, and ends the turn with `tool_calls`, or `stop` for a function the request named,
 * as OpenAI does; after a tool message it answers "Echo: <that tool's output>".
 * Tool messages must answer the calls of the assistant message before them, as the real API requires. As the real
 * API does, the Responses API refuses an input message part of a type it does not take (Chat Completions'
 * `image_url`, say), and images for any model but DALL·E refuse `response_format`. A Responses request naming
 * what OpenAI keeps by an id ending in `-<n>` (`previous_response_id`, `conversation`, a stored `prompt`, an
 * `item_reference` input item) is billed n more input tokens for each, as OpenAI bills the stored input it reads.
 * So are the content parts it reads besides their words (chat and Responses alike): a file or an image named by a
 * `file_id` (or a file by a `file_url`) ending in `-<n>` is billed n input tokens; a file's or audio's data sent
 * inline one token per 4 characters of its base64 (3 bytes), a stand-in for the tokens the real API bills for
 * their content (a PDF's pages, audio's seconds), which the gateway does not count either. A Responses request
 * with a `web_search` or `file_search` tool is billed `retrievedTokens` more, what the search found and the model
 * read, as OpenAI bills search content and file search results as input.
 * Every request body is checked against the protocol's request schema; one that does not conform is
 * answered 400 with the provider's error body, as the real API does.
 */
export const fakeOpenAiKey = 'sk-fake-openai-key';

/** Input tokens of what a Responses search tool finds (see the header). */
export const retrievedTokens = 250_000;
const isSearchTool = wireCheck(
  Type.Object({ type: Type.Union([Type.Literal('web_search'), Type.Literal('file_search')]) }),
);

const isChatFilePart = wireCheck(
  Type.Object({
    type: Type.Literal('file'),
    file: Type.Object({ file_data: Type.Optional(Type.String()), file_id: Type.Optional(Type.String()) }),
  }),
);
const isInputFilePart = wireCheck(
  Type.Object({
    type: Type.Literal('input_file'),
    file_data: Type.Optional(Type.String()),
    file_id: Type.Optional(Type.Union([Type.String(), Type.Null()])),
    file_url: Type.Optional(Type.String()),
  }),
);
const isFileImagePart = wireCheck(Type.Object({ type: Type.Literal('input_image'), file_id: Type.String() }));
const isInputAudioPart = wireCheck(InputAudioPart);

/** n for an id (or address) ending in `-<n>`, else none. */
const namedTokens = (id: string | null | undefined) => Number(/-(\d+)$/.exec(id ?? '')?.[1] ?? 0);
/** One token per 4 characters of inline base64. */
const inlineTokens = (data: string | undefined) => Math.ceil((data?.length ?? 0) / 4);

/** Input tokens of a content part beyond its words: a file's or audio's, an image's by file id (see the header). */
function attachedInputTokens(part: unknown): number {
  if (isChatFilePart(part)) return namedTokens(part.file.file_id) + inlineTokens(part.file.file_data);
  if (isInputFilePart(part))
    return namedTokens(part.file_id) + namedTokens(part.file_url) + inlineTokens(part.file_data);
  if (isFileImagePart(part)) return namedTokens(part.file_id);
  if (isInputAudioPart(part)) return inlineTokens(part.input_audio.data);
  return 0;
}

/** The attached input tokens of every part of `contents` (a message's content each, or a call's output). */
function attachedTokensOf(contents: readonly unknown[]): number {
  let tokens = 0;
  for (const content of contents)
    if (Array.isArray(content)) for (const part of content) tokens += attachedInputTokens(part);
  return tokens;
}

/** The real API's check: tool messages answer, one each, the calls of the assistant message right before them. */
function toolSequenceError(messages: ChatCompletionsRequest['messages']): string | undefined {
  let expected: string[] = [];
  for (const [index, message] of messages.entries()) {
    if (message.role === 'tool') {
      if (!expected.includes(message.tool_call_id ?? ''))
        return `Invalid parameter: messages.[${index}] with role 'tool' must be a response to a preceeding message with 'tool_calls'.`;
      expected = expected.filter((id) => id !== message.tool_call_id);
      continue;
    }
    if (expected.length > 0)
      return `An assistant message with 'tool_calls' must be followed by tool messages responding to each 'tool_call_id'. The following tool_call_ids did not have response messages: ${expected.join(', ')}`;
    expected =
      message.role === 'assistant'
        ? (message.tool_calls ?? []).flatMap((call) => (isFunctionCall(call) ? [call.id] : []))
        : [];
  }
  return undefined;
}

/** The function the fake calls, or none when the request offers no tools or forbids calling them. */
function chosenTool(body: ChatCompletionsRequest): string | undefined {
  const functions = (body.tools ?? []).flatMap((tool) => (isChatFunctionTool(tool) ? [tool.function.name] : []));
  if (functions.length === 0 || body.tool_choice === 'none' || body.messages.at(-1)?.role === 'tool') return undefined;
  return isChatNamedToolChoice(body.tool_choice) ? body.tool_choice.function.name : functions[0];
}

/** The declared parameters of the function `name` among a request's tools. */
const parametersOf = (body: ChatCompletionsRequest, name: string) =>
  (body.tools ?? []).filter(isChatFunctionTool).find((tool) => tool.function.name === name)?.function.parameters;

const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);
/** The text of a message's content, string or parts; image parts carry no words. */
const contentText = (content: ChatCompletionsRequest['messages'][number]['content']) =>
  typeof content === 'string'
    ? content
    : (content ?? []).map((part) => (isChatTextPart(part) ? part.text : '')).join(' ');

function sendError(
  response: ServerResponse,
  status: number,
  {
    type,
    message,
    code,
    param = null,
    headers = {},
  }: { type: string; message: string; code: string | null; param?: string | null; headers?: Record<string, string> },
): void {
  const body: OpenAiError = { error: { message, type, param, code } };
  writeJson(response, { status, body, headers });
}

const isChatRequest = wireCheck(ChatCompletionsRequest);
const isResponsesRequest = wireCheck(ResponsesRequest);
const isEmbeddingsRequest = wireCheck(EmbeddingsRequest);

/** The real API's answer to a body that does not follow the operation's schema. */
const refuseBody = (response: ServerResponse, operation: string) =>
  sendError(response, 400, {
    type: 'invalid_request_error',
    message: `The request body does not follow the ${operation} schema.`,
    code: 'invalid_request_body',
  });

async function chatCompletions(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    return sendError(response, 401, {
      type: 'invalid_request_error',
      message: 'Incorrect API key provided',
      code: 'invalid_api_key',
    });
  }
  if (!isChatRequest(request.body)) return refuseBody(response, 'chat completions');
  const body = request.body;
  if (body.model === 'fake-slow-start') await sleep(300);
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure) {
    const status = Number(failure[1]);
    if (status === 429)
      return sendError(response, 429, {
        type: 'rate_limit_error',
        message: 'Rate limit reached for requests',
        code: 'rate_limit_exceeded',
        headers: {
          'retry-after': '1',
        },
      });
    return sendError(response, status, {
      type: status >= 500 ? 'server_error' : 'invalid_request_error',
      message: `The fake failed with ${status}`,
      code: null,
    });
  }
  const sequenceError = toolSequenceError(body.messages);
  if (sequenceError)
    return sendError(response, 400, { type: 'invalid_request_error', message: sequenceError, code: null });
  const lastUser = body.messages.filter((message) => message.role === 'user').at(-1);
  const prompt = lastUser ? contentText(lastUser.content) : '';
  const lastTool = body.messages.at(-1)?.role === 'tool' ? body.messages.at(-1) : undefined;
  const drip = /^fake-drip-(\d+)-(\d+)$/.exec(body.model);
  const chunkDelayMs = drip ? Number(drip[1]) : body.model === 'fake-slow' ? 200 : 0;
  const echo = `Echo: ${lastTool ? contentText(lastTool.content) : prompt}`;
  const format = body.response_format;
  const json = format?.type === 'json_schema' || format?.type === 'json_object';
  const schema = isChatJsonSchemaFormat(format) ? format.json_schema.schema : undefined;
  const formatError = refusedRequestError(body);
  if (formatError) return sendError(response, 400, { type: 'invalid_request_error', message: formatError, code: null });
  const refuses = body.model === 'fake-refusal';
  let words = drip
    ? Array.from({ length: Number(drip[2]) }, () => 'tick')
    : refuses
      ? wordsOf("I'm sorry, I can't help with that.")
      : wordsOf(json ? jsonAnswer(schema, echo) : echo);
  const choices = Array.from({ length: body.n ?? 1 }, (_, index) => index);
  // Asked for, each word's log probability (and its likeliest alternatives) as the protocol writes them.
  const logprobsOf = (pieces: readonly string[], first: number) =>
    body.logprobs === true
      ? wireLogprobs(
          pieces.map((piece, offset) =>
            fakeTokenLogprob(piece, { place: first + offset, top: body.top_logprobs ?? 0 }),
          ),
        )
      : null;
  let finishReason = 'stop';
  if (body.max_tokens !== undefined && words.length > body.max_tokens) {
    words = words.slice(0, body.max_tokens);
    finishReason = 'length';
  }
  const usage = {
    prompt_tokens:
      body.messages.reduce((sum, message) => sum + wordsOf(contentText(message.content)).length, 0) +
      attachedTokensOf(body.messages.map((message) => message.content)),
    completion_tokens: words.length * choices.length,
  };
  const fullUsage = { ...usage, total_tokens: usage.prompt_tokens + usage.completion_tokens };
  const base = {
    id: 'chatcmpl-fake1',
    created: 1_723_031_664,
    model: `${body.model}-2024-08-06`,
    system_fingerprint: 'fp_fake',
  };
  const tool = chosenTool(body);
  if (tool) {
    const streaming = callStreamingOf(body.model);
    return toolCall(response, body, {
      base,
      calls: fakeCalls(body, { tool, prompt, parallel: streaming !== 'openai' }),
      streaming,
      promptTokens: usage.prompt_tokens,
    });
  }
  if (!body.stream) {
    if (drip) await sleep(chunkDelayMs * words.length);
    const completion = {
      ...base,
      object: 'chat.completion',
      choices: choices.map((index) => ({
        index,
        message: refuses
          ? { role: 'assistant', content: null, refusal: words.join(' '), annotations: [] }
          : { role: 'assistant', content: words.join(' '), refusal: null, annotations: [] },
        logprobs: logprobsOf(
          words.map((word, place) => (place === 0 ? word : ` ${word}`)),
          0,
        ),
        finish_reason: finishReason,
      })),
      ...(body.model === 'fake-no-usage' ? {} : { usage: fullUsage }),
    };
    return writeJson<ChatCompletion>(response, {
      status: 200,
      body: completion,
      headers: { 'x-request-id': 'req_fake' },
    });
  }
  const includeUsage = body.stream_options?.include_usage === true && body.model !== 'fake-no-usage';
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    connection: 'keep-alive',
  });
  const send = (choices: object[], extra: Partial<ChatCompletionChunk> = {}) => {
    const chunk = {
      ...base,
      object: 'chat.completion.chunk',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    };
    response.write(sseEvent<ChatCompletionChunk>(chunk));
  };
  const eachChoice = (delta: object, finish: string | null, logprobs: object | null = null) =>
    send(choices.map((index) => ({ index, delta, logprobs, finish_reason: finish })));
  eachChoice({ role: 'assistant', content: '', refusal: null }, null);
  for (const [index, word] of words.entries()) {
    if (body.model === 'fake-cut' && index === 2) {
      // Let what was written reach the client first, as a real connection dropping mid-answer would.
      await sleep(50);
      response.socket?.destroy();
      return;
    }
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
    // A client that left stops a slow generation, as the real API stops generating for a closed connection.
    if (drip && response.destroyed) return;
    const piece = index === 0 ? word : ` ${word}`;
    eachChoice({ [refuses ? 'refusal' : 'content']: piece }, null, logprobsOf([piece], index));
  }
  eachChoice({}, finishReason);
  if (includeUsage) send([], { usage: fullUsage });
  response.end(body.model === 'fake-no-done' ? undefined : 'data: [DONE]\n\n');
}

/** A keyword a strict schema may not use, anywhere in it, as the real API words it (the context it names is the root's). */
function strictlyRefused(schema: SchemaObject): string | undefined {
  const refusing = (node: SchemaObject) => Object.keys(node).find((keyword) => strictRefusedKeywords.has(keyword));
  const node = findSchemaObject(schema, (candidate) => refusing(candidate) !== undefined);
  return node && `In context=(), '${refusing(node)}' is not permitted.`;
}

/**
 * What the real API refuses of a request's tool calls, strict functions and answer format, in its words: a tool
 * call id longer than 40 characters, a strict function whose parameters are open, JSON mode without the word
 * "json" in the messages, a schema whose root is not an object, a strict schema using a keyword strict refuses
 * anywhere, and a strict schema whose root object is open or leaves a property out of `required` (the real API
 * checks nested objects too; this fake reads the root).
 */
function refusedRequestError(body: ChatCompletionsRequest): string | undefined {
  for (const [index, message] of body.messages.entries()) {
    const tooLong = (message.tool_calls ?? []).findIndex((call) => 'id' in call && String(call.id).length > 40);
    if (tooLong >= 0)
      return `Invalid 'messages[${index}].tool_calls[${tooLong}].id': string too long. Expected a string with maximum length 40.`;
  }
  for (const tool of body.tools ?? []) {
    if (!isChatFunctionTool(tool) || tool.function.strict !== true) continue;
    const parameters = tool.function.parameters ?? {};
    if (parameters.additionalProperties !== false)
      return `Invalid schema for function '${tool.function.name}': In context=(), 'additionalProperties' is required to be supplied and to be false.`;
    const refused = strictlyRefused(parameters);
    if (refused) return `Invalid schema for function '${tool.function.name}': ${refused}`;
  }
  const format = body.response_format;
  if (format?.type === 'json_object' && !body.messages.some((message) => /json/i.test(contentText(message.content))))
    return "'messages' must contain the word 'json' in some form, to use 'response_format' of type 'json_object'.";
  if (!isChatJsonSchemaFormat(format) || format.json_schema.schema === undefined) return undefined;
  const { name, schema, strict } = format.json_schema;
  if (schema.type !== 'object')
    return `Invalid schema for response_format '${name}': schema must be a JSON Schema of 'type: "object"', got 'type: "${String(schema.type)}"'.`;
  if (strict !== true) return undefined;
  const refused = strictlyRefused(schema);
  if (refused) return `Invalid schema for response_format '${name}': ${refused}`;
  if (schema.additionalProperties !== false)
    return `Invalid schema for response_format '${name}': In context=(), 'additionalProperties' is required to be supplied and to be false.`;
  const properties = Object.keys(schema.properties ?? {});
  const required = Array.isArray(schema.required) ? schema.required : [];
  const missing = properties.find((property) => !required.includes(property));
  return missing === undefined
    ? undefined
    : `Invalid schema for response_format '${name}': In context=(), 'required' is required to be supplied and to be an array including every key in properties. Missing '${missing}'.`;
}

/**
 * How a server streams tool calls, the model name's `fake-calls-<mode>` (else OpenAI's own way: the first fragment
 * of a call carries its index, id, type and name, the later ones its index and a piece of the arguments only).
 * Each mode is how named OpenAI-compatible servers stream the later fragments of a call:
 * - `repeat-id`: its `id` and `type` again (LiteLLM's proxy, BerriAI/litellm#20480);
 * - `repeat-all`: its `id`, `type` and `function.name` again (DeepSeek, Qwen, Fireworks);
 * - `empty-id`: `id: ""` and `function.name: ""` (LiteLLM, BerriAI/litellm#12513);
 * - `null-name`: `function.name: null` (vLLM);
 * - `null-id`: `id`, `type` and `function.name` null, and the first fragment's `arguments` null (servers that
 *   write every field they leave unset as null, Fireworks' firefunction among them, BerriAI/litellm#4440);
 * - `no-index`: each call whole in one fragment without `index`, the turn ended with `stop` (Google's
 *   OpenAI-compatible endpoint);
 * - `index-zero`: every parallel call under `index` 0, each opening with an id of its own (Ollama's
 *   OpenAI-compatible endpoint, ollama/ollama#15457; SGLang);
 * - `late-name`: the first fragment of a call has its index, id and type but no name, which comes alone in the
 *   next one (as a server may stream it that learns the name after opening the call; one MLX server's release
 *   opened calls with an empty name, jjang-ai/vmlx#244).
 */
const callStreamings = [
  'openai',
  'repeat-id',
  'repeat-all',
  'empty-id',
  'null-name',
  'null-id',
  'no-index',
  'index-zero',
  'late-name',
] as const;
type CallStreaming = (typeof callStreamings)[number];

function callStreamingOf(model: string): CallStreaming {
  const mode = /^fake-calls-(.+)$/.exec(model)?.[1];
  return callStreamings.find((known) => known === mode) ?? 'openai';
}

/**
 * The calls the model makes: one of `tool` with the prompt; with `parallel`, one per part of a prompt joined by
 * " and " (parallel calls, as a model asked about several things makes).
 */
function fakeCalls(
  body: ChatCompletionsRequest,
  { tool, prompt, parallel }: { tool: string; prompt: string; parallel: boolean },
): ChatFunctionCall[] {
  const parts = parallel ? prompt.split(' and ') : [prompt];
  return parts.map((part, position) => ({
    id: `call_fake${position + 1}`,
    type: 'function',
    function: { name: tool, arguments: JSON.stringify(toolArguments(parametersOf(body, tool), part)) },
  }));
}

/**
 * The finish of a turn of calls. OpenAI ends a call of the function a request named (`tool_choice`) with `stop`,
 * and other calls, `required` ones too, with `tool_calls` (as measured against the API in vllm-project/vllm#25054;
 * the wire notes name only `tool_calls`, saying nothing of a forced choice); Google's compatible endpoint ends
 * every turn with `stop`.
 */
function callFinish(body: ChatCompletionsRequest, streaming: CallStreaming): string {
  return streaming === 'no-index' || isChatNamedToolChoice(body.tool_choice) ? 'stop' : 'tool_calls';
}

/** What a later fragment of a call repeats of its first, per mode (see `CallStreaming`). */
function repeatedFields({ id, function: { name } }: ChatFunctionCall, streaming: CallStreaming) {
  const repeats: Record<CallStreaming, { call: object; function: object }> = {
    openai: { call: {}, function: {} },
    'repeat-id': { call: { id, type: 'function' }, function: {} },
    'repeat-all': { call: { id, type: 'function' }, function: { name } },
    'empty-id': { call: { id: '', type: 'function' }, function: { name: '' } },
    'null-name': { call: {}, function: { name: null } },
    'null-id': { call: { id: null, type: null }, function: { name: null } },
    'no-index': { call: {}, function: {} },
    'index-zero': { call: {}, function: {} },
    'late-name': { call: {}, function: {} },
  };
  return repeats[streaming];
}

/**
 * The fragments the call at `position` streams in: the call whole (`no-index`), or its opening (without its name,
 * then the name alone, with `late-name`) and two pieces of its arguments, under the call's index (0 for every call
 * with `index-zero`).
 */
function callFragments(call: ChatFunctionCall, position: number, streaming: CallStreaming): object[] {
  if (streaming === 'no-index') return [call];
  const index = streaming === 'index-zero' ? 0 : position;
  const args = call.function.arguments;
  const opening = { index, ...call, function: { ...call.function, arguments: streaming === 'null-id' ? null : '' } };
  const opened =
    streaming === 'late-name'
      ? [
          { ...opening, function: { arguments: '' } },
          { index, function: { name: call.function.name } },
        ]
      : [opening];
  const repeated = repeatedFields(call, streaming);
  const half = Math.floor(args.length / 2);
  return [
    ...opened,
    ...[args.slice(0, half), args.slice(half)].map((piece) => ({
      index,
      ...repeated.call,
      function: { ...repeated.function, arguments: piece },
    })),
  ];
}

/** Calls instead of an answer: `content: null`, `tool_calls`, the turn's finish (`callFinish`); five output tokens each. */
function toolCall(
  response: ServerResponse,
  body: ChatCompletionsRequest,
  {
    base,
    calls,
    streaming,
    promptTokens,
  }: { base: object; calls: ChatFunctionCall[]; streaming: CallStreaming; promptTokens: number },
): void {
  const outputTokens = 5 * calls.length;
  const usage = {
    prompt_tokens: promptTokens,
    completion_tokens: outputTokens,
    total_tokens: promptTokens + outputTokens,
  };
  const finish = callFinish(body, streaming);
  if (!body.stream) {
    const message = { role: 'assistant', content: null, tool_calls: calls, refusal: null, annotations: [] };
    const completion = {
      ...base,
      object: 'chat.completion',
      choices: [{ index: 0, message, logprobs: null, finish_reason: finish }],
      usage,
    };
    writeJson<ChatCompletion>(response, { status: 200, body: completion });
    return;
  }
  const includeUsage = body.stream_options?.include_usage === true;
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  const send = (choices: object[], extra: Partial<ChatCompletionChunk> = {}) => {
    const chunk = {
      ...base,
      object: 'chat.completion.chunk',
      choices,
      ...(includeUsage ? { usage: null } : {}),
      ...extra,
    };
    response.write(sseEvent<ChatCompletionChunk>(chunk));
  };
  const fragments = calls.flatMap((call, index) => callFragments(call, index, streaming));
  // As OpenAI streams calls that open the answer: the role comes with the first fragment, in one chunk.
  for (const [position, fragment] of fragments.entries()) {
    const delta =
      position === 0
        ? { role: 'assistant', content: null, tool_calls: [fragment], refusal: null }
        : { tool_calls: [fragment] };
    send([{ index: 0, delta, logprobs: null, finish_reason: null }]);
  }
  send([{ index: 0, delta: {}, logprobs: null, finish_reason: finish }]);
  if (includeUsage) send([], { usage });
  response.end('data: [DONE]\n\n');
}

/** The content part types the Responses API takes in an input message, in the order its refusal lists them. */
const responsesPartTypes = [
  'input_text',
  'input_image',
  'input_audio',
  'output_text',
  'refusal',
  'input_file',
  'computer_screenshot',
  'summary_text',
  'encrypted_content',
];

/**
 * The real API's refusal of an input message's part of a type the Responses API does not take (Chat Completions'
 * `image_url` or `text`, say), in its words and naming the part.
 */
function responsesPartError(items: readonly ResponsesInputItem[]): { message: string; param: string } | undefined {
  const listed = `${responsesPartTypes
    .slice(0, -1)
    .map((type) => `'${type}'`)
    .join(', ')}, and '${responsesPartTypes.at(-1)}'`;
  for (const [index, item] of items.entries()) {
    if (!isResponsesMessageItem(item) || typeof item.content === 'string') continue;
    for (const [partIndex, part] of item.content.entries()) {
      if (responsesPartTypes.includes(part.type)) continue;
      return {
        message: `Invalid value: '${part.type}'. Supported values are: ${listed}.`,
        param: `input[${index}].content[${partIndex}].type`,
      };
    }
  }
  return undefined;
}

/**
 * The Responses API: a Response object, or named events with sequence numbers ending at response.completed.
 * With function tools (and tool_choice other than "none") the output is one function_call of the first of
 * them, its arguments following the function's parameters as in chat completions; after a function_call_output item it answers "Echo: <that output>"; asked for JSON (`text.format`), the
 * answer is inside a value of the schema, as in chat completions.
 */
/** Input tokens of what OpenAI keeps that a Responses request names: n for each id ending in `-<n>`. */
function storedInputTokens(body: ResponsesRequest, items: readonly ResponsesInputItem[]): number {
  const conversation = typeof body.conversation === 'string' ? body.conversation : body.conversation?.id;
  const references = items.filter(isItemReference).map((item) => item.id);
  return [body.previous_response_id, conversation, body.prompt?.id, ...references].reduce(
    (sum, id) => sum + Number(/-(\d+)$/.exec(id ?? '')?.[1] ?? 0),
    0,
  );
}

async function responses(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    return sendError(response, 401, {
      type: 'invalid_request_error',
      message: 'Incorrect API key provided',
      code: 'invalid_api_key',
    });
  }
  if (!isResponsesRequest(request.body)) return refuseBody(response, 'responses');
  const body = request.body;
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure)
    return sendError(response, Number(failure[1]), {
      type: 'server_error',
      message: `The fake failed with ${failure[1]}`,
      code: null,
    });
  const items: ResponsesInputItem[] =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  const partError = responsesPartError(items);
  if (partError)
    return sendError(response, 400, { type: 'invalid_request_error', code: 'invalid_value', ...partError });
  const messages = items.filter(isResponsesMessageItem);
  const textOf = (content: ResponsesMessageItem['content'] | undefined) =>
    typeof content === 'string'
      ? content
      : (content ?? []).map((part) => (isResponsesTextPart(part) ? part.text : '')).join('');
  const last = messages.filter((item) => item.role === 'user').at(-1);
  const final = items.at(-1);
  const answered = isFunctionCallOutputItem(final) ? textOf(final.output) : undefined;
  const echo = `Echo: ${answered ?? textOf(last?.content)}`;
  const format = body.text?.format;
  const json = format?.type === 'json_schema' || format?.type === 'json_object';
  const schema = isResponsesJsonSchemaFormat(format) ? format.schema : undefined;
  const words = wordsOf(json ? jsonAnswer(schema, echo) : echo);
  const functionTool =
    answered === undefined && body.tool_choice !== 'none' ? body.tools?.find(isResponsesFunctionTool) : undefined;
  const tool = functionTool?.name;
  const usage = {
    input_tokens:
      messages.reduce((sum, item) => sum + wordsOf(textOf(item.content)).length, 0) +
      wordsOf(body.instructions ?? '').length +
      storedInputTokens(body, items) +
      ((body.tools ?? []).some((tool) => isSearchTool(tool)) ? retrievedTokens : 0) +
      attachedTokensOf(
        items.map((item) =>
          isResponsesMessageItem(item) ? item.content : isFunctionCallOutputItem(item) ? item.output : undefined,
        ),
      ),
    input_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
    output_tokens: words.length,
    output_tokens_details: { reasoning_tokens: 0 },
  };
  const message = {
    id: 'msg_fake1',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', text: words.join(' '), annotations: [] }],
  };
  const call =
    tool === undefined
      ? undefined
      : {
          id: 'fc_fake1',
          type: 'function_call',
          status: 'completed',
          call_id: 'call_fake1',
          name: tool,
          arguments: JSON.stringify(toolArguments(functionTool?.parameters, textOf(last?.content))),
        };
  const base = {
    id: 'resp_fake1',
    object: 'response' as const,
    created_at: 1_741_476_542,
    model: `${body.model}-2025-04-14`,
    error: null,
    incomplete_details: null,
    // The settings every Response repeats from its request, as OpenAI's do.
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    store: true,
    temperature: 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: 1,
    truncation: 'disabled',
    user: null,
    metadata: {},
  };
  const whole = {
    ...base,
    status: 'completed',
    completed_at: 1_741_476_543,
    output: [call ?? message],
    usage: { ...usage, total_tokens: usage.input_tokens + usage.output_tokens },
  };
  if (!body.stream) return writeJson<ResponseObject>(response, { status: 200, body: whole });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  let sequence = 0;
  const send = (type: string, data: object) => {
    const event = { type, sequence_number: sequence++, ...data };
    response.write(sseEvent<ResponsesStreamEvent>(event, type));
  };
  const inProgress = { ...base, status: 'in_progress', output: [], usage: null };
  send('response.created', { response: inProgress });
  send('response.in_progress', { response: inProgress });
  if (call) {
    send('response.output_item.added', { output_index: 0, item: { ...call, status: 'in_progress', arguments: '' } });
    send('response.function_call_arguments.delta', { item_id: call.id, output_index: 0, delta: call.arguments });
    send('response.function_call_arguments.done', {
      item_id: call.id,
      output_index: 0,
      name: tool,
      arguments: call.arguments,
    });
    send('response.output_item.done', { output_index: 0, item: call });
    send('response.completed', { response: whole });
    response.end();
    return;
  }
  send('response.output_item.added', { output_index: 0, item: { ...message, status: 'in_progress', content: [] } });
  send('response.content_part.added', {
    item_id: 'msg_fake1',
    output_index: 0,
    content_index: 0,
    part: { type: 'output_text', text: '', annotations: [] },
  });
  for (const [index, word] of words.entries()) {
    if (body.model === 'fake-cut' && index === 2) {
      await sleep(50);
      response.socket?.destroy();
      return;
    }
    send('response.output_text.delta', {
      item_id: 'msg_fake1',
      output_index: 0,
      content_index: 0,
      delta: index === 0 ? word : ` ${word}`,
      logprobs: [],
    });
  }
  send('response.output_text.done', {
    item_id: 'msg_fake1',
    output_index: 0,
    content_index: 0,
    text: words.join(' '),
    logprobs: [],
  });
  send('response.content_part.done', {
    item_id: 'msg_fake1',
    output_index: 0,
    content_index: 0,
    part: message.content[0]!,
  });
  send('response.output_item.done', { output_index: 0, item: message });
  send('response.completed', { response: whole });
  response.end();
}

/**
 * `POST /v1/embeddings` as the real API answers it: vectors of 8 numbers by default (`dimensions` only for
 * the text-embedding-3 models), float arrays or base64 of little-endian float32, one token per word.
 */
function embeddings(request: RecordedRequest, response: ServerResponse): void {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    sendError(response, 401, {
      type: 'invalid_request_error',
      message: 'Incorrect API key provided',
      code: 'invalid_api_key',
    });
    return;
  }
  if (!isEmbeddingsRequest(request.body)) {
    refuseBody(response, 'embeddings');
    return;
  }
  const body = request.body;
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure) {
    sendError(response, Number(failure[1]), {
      type: 'server_error',
      message: `The fake failed with ${failure[1]}`,
      code: null,
    });
    return;
  }
  if (body.model === 'fake-null-answer')
    return void response.writeHead(200, { 'content-type': 'application/json' }).end('null');
  const given = typeof body.input === 'string' ? [body.input] : body.input;
  const inputs = given.filter((input): input is string => typeof input === 'string' && input !== '');
  if (inputs.length === 0 || inputs.length < given.length) {
    sendError(response, 400, {
      type: 'invalid_request_error',
      message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference.",
      code: null,
    });
    return;
  }
  if (body.dimensions !== undefined && !body.model.startsWith('text-embedding-3')) {
    sendError(response, 400, {
      type: 'invalid_request_error',
      message: 'This model does not support specifying dimensions.',
      code: null,
    });
    return;
  }
  const vectors = inputs.map((input) => fakeVector(input, body.dimensions ?? 8));
  const tokens = inputs.reduce((sum, input) => sum + wordsOf(input).length, 0);
  const usage = { prompt_tokens: tokens, total_tokens: tokens };
  if (body.encoding_format === 'base64') {
    // The protocol's other encoding, which the gateway never asks for: little-endian float32, base64.
    const data = vectors.map((vector, index) => ({
      object: 'embedding',
      index,
      embedding: Buffer.from(new Float32Array(vector).buffer).toString('base64'),
    }));
    writeJson(response, { status: 200, body: { object: 'list', data, model: body.model, usage } });
    return;
  }
  const answer = {
    object: 'list',
    data: vectors.map((embedding, index) => ({ object: 'embedding', index, embedding })),
    model: body.model,
    usage,
  };
  writeJson<EmbeddingsAnswer>(response, { status: 200, body: answer });
}

const isImagesRequest = wireCheck(ImagesGenerateRequest);

/** The answer to an images request: `n` PNGs as base64, with token usage and the quality rendered (`auto` renders `medium`). */
function imagesAnswer(prompt: string, n: number, quality: string | undefined): ImagesAnswer {
  // `fake-large`: images of 18 MiB of base64 each, as large high-quality images are.
  const image = (index: number) =>
    prompt.includes('fake-large') ? 'A'.repeat(18 * 1024 * 1024) : fakePng(`${prompt}|${index}`).toString('base64');
  const data = Array.from({ length: n }, (_, index) => ({ b64_json: image(index) }));
  const rendered = quality === undefined || quality === 'auto' ? 'medium' : quality;
  return {
    created: 1_713_833_628,
    data,
    quality: rendered,
    size: '1024x1024',
    output_format: 'png',
    usage: {
      input_tokens: 50,
      output_tokens: 272 * n,
      total_tokens: 50 + 272 * n,
      input_tokens_details: { image_tokens: 0, text_tokens: 50 },
    },
  };
}

/**
 * `POST /v1/images/generations` as gpt-image models answer it: base64 PNGs and token usage; with `stream: true`,
 * one `image_generation.partial_image` and one `image_generation.completed` event per image. Scenarios come
 * from the prompt (see fake-images.ts).
 */
async function imageGenerations(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`)
    return sendError(response, 401, {
      type: 'invalid_request_error',
      message: 'Incorrect API key provided',
      code: 'invalid_api_key',
    });
  if (!isImagesRequest(request.body)) return refuseBody(response, 'images/generations');
  const body = request.body;
  // Only DALL·E takes `response_format`: GPT image models always answer base64, and refuse it as unknown.
  if (body.response_format !== undefined && !body.model.startsWith('dall-e'))
    return sendError(response, 400, {
      type: 'invalid_request_error',
      message: "Unknown parameter: 'response_format'.",
      param: 'response_format',
      code: 'unknown_parameter',
    });
  const scenario = scenarioOf(body.prompt);
  if (!(await delayFor(scenario))) return;
  if (scenario.errorStatus)
    return sendError(response, scenario.errorStatus, {
      type: scenario.errorStatus === 400 ? 'image_generation_user_error' : 'server_error',
      message: `The fake failed with ${scenario.errorStatus}`,
      code: null,
    });
  if (scenario.garbage)
    return void response.writeHead(200, { 'content-type': 'application/json' }).end('{"images": []}');
  const made = imagesAnswer(body.prompt, body.n ?? 1, body.quality);
  const answer = scenario.notImage
    ? { ...made, data: made.data.map((item) => ({ ...item, b64_json: notAnImagePage.toString('base64') })) }
    : made;
  if (body.stream !== true) return writeJson<ImagesAnswer>(response, { status: 200, body: answer });
  response.writeHead(200, { 'content-type': 'text/event-stream' });
  for (const [index, item] of answer.data.entries()) {
    const partial: ImagesStreamEvent = {
      type: 'image_generation.partial_image',
      b64_json: fakePng(`partial ${index}`, 4, 4).toString('base64'),
      partial_image_index: 0,
    };
    response.write(sseEvent(partial, partial.type));
    const completed: ImagesStreamEvent = {
      type: 'image_generation.completed',
      b64_json: item.b64_json!,
      quality: answer.quality,
      size: '1024x1024',
      usage: answer.usage,
    };
    response.write(sseEvent(completed, completed.type));
  }
  response.end();
}

/** `POST /v1/images/edits` (multipart): the prompt and `image[]` parts read from the form; answered like a generation. */
function imageEdits(request: RecordedRequest, response: ServerResponse): void {
  if (request.headers.authorization !== `Bearer ${fakeOpenAiKey}`) {
    sendError(response, 401, {
      type: 'invalid_request_error',
      message: 'Incorrect API key provided',
      code: 'invalid_api_key',
    });
    return;
  }
  const form = typeof request.body === 'string' ? request.body : '';
  if (!String(request.headers['content-type']).startsWith('multipart/form-data')) {
    sendError(response, 400, {
      type: 'invalid_request_error',
      message: 'The edits endpoint takes multipart/form-data',
      code: null,
    });
    return;
  }
  const field = (name: string) => new RegExp(`name="${name}"\r\n\r\n([^\r]*)`).exec(form)?.[1];
  const images = form.split('name="image[]"').length - 1;
  const prompt = field('prompt');
  if (!prompt || images === 0) {
    sendError(response, 400, {
      type: 'invalid_request_error',
      message: "Missing required parameter: 'image'.",
      code: null,
    });
    return;
  }
  writeJson<ImagesAnswer>(response, {
    status: 200,
    body: imagesAnswer(prompt, Number(field('n') ?? 1), field('quality')),
  });
}

export function startOpenAiFake(): Promise<FakeServer> {
  return startFakeServer(async (request, response) => {
    if (request.method === 'POST' && request.path === '/v1/images/generations')
      return imageGenerations(request, response);
    if (request.method === 'POST' && request.path === '/v1/images/edits') return imageEdits(request, response);
    if (request.method === 'POST' && request.path === '/v1/chat/completions') return chatCompletions(request, response);
    if (request.method === 'POST' && request.path === '/v1/responses') return responses(request, response);
    if (request.method === 'POST' && request.path === '/v1/embeddings') return embeddings(request, response);
    if (request.method === 'GET' && request.path === '/v1/models') {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(
        JSON.stringify({
          object: 'list',
          data: [{ id: 'gpt-4o-mini', object: 'model', created: 1_686_935_002, owned_by: 'openai' }],
        }),
      );
      return;
    }
    sendError(response, 404, {
      type: 'invalid_request_error',
      message: `Invalid URL (${request.method} ${request.path})`,
      code: 'unknown_url',
    });
  });
}
