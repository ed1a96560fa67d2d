import type { ServerResponse } from 'node:http';
import { Type } from 'typebox';
import { objectOf } from '../../src/domain/wire-values.ts';
import { describesObject, findSchemaObject, type SchemaObject } from '../../src/domain/json-schema.ts';
import {
  heldAnswerRefuses,
  isClientTool,
  isKnownContentBlock,
  isKnownOutputFormat,
  isKnownThinkingConfig,
  MessagesRequest,
  type AnthropicError,
  type ContentBlock,
  type Message,
  type MessagesStreamEvent,
} from '../../src/protocols/anthropic/messages.ts';
import { wireCheck } from '../../src/protocols/wire-check.ts';
import { sleep, startFakeServer, type FakeServer, type RecordedRequest } from './fake-server.ts';
import { jsonAnswer, toolArguments } from './structured-answer.ts';
import { sseEvent, writeJson } from './wire.ts';

/**
 * A fake Anthropic upstream speaking the real Messages wire format (see the Anthropic wire notes): JSON
 * Message bodies, or SSE with `event:` lines (message_start, content_block_start, ping, content_block_delta,
 * content_block_stop, message_delta with cumulative output tokens, message_stop; no [DONE]), and the
 * provider's error body. The model name picks the scenario:
 * - `fake-error-<status>`: that status with an Anthropic error body (529 is overloaded_error);
 * - `fake-cut`: the stream stops after the first delta, with no message_stop;
 * - `fake-stream-error`: an `event: error` (overloaded) after the first delta;
 * - `fake-cached`: 1,000 more prompt tokens read from the cache; its message_delta repeats input_tokens with the
 *   cache counts null, as MessageDeltaUsage may;
 * anything else answers "Echo: <last user text>", one word per delta; asked for JSON (`output_config.format`, or
 * the older `output_format`), that text inside a value of the schema (structured-answer.ts). With tools (and a tool_choice other
 * than none) it says "Let me look." and calls the chosen or first tool with arguments following its input_schema
 * (structured-answer.ts: strings are the last user text; `{"query": <last user text>}` for a schema of no
 * properties), streaming the input as input_json_delta fragments; after tool results it answers "Echo: <the
 * result>", unless `tool_choice` forces a call, which the real API then makes again: the tool named (`tool`), or
 * under `any` the first tool the turn before did not call (or the first).
 * Tool results must answer tool_use blocks of the assistant turn right before them, as the real API requires.
 * With `thinking` enabled the answer begins with a thinking block signed `fakeThinkingSignature`, and the request
 * is held to the rules of Anthropic's extended thinking guide (`thinkingError`). `fake-thinking` thinks unasked (as a
 * model whose thinking is on by default): a thinking block, then a redacted_thinking block, then the answer.
 * A body that does not follow the protocol's request schema is answered 400 invalid_request_error, as is a custom
 * tool whose input_schema does not say `type: "object"` (the real API requires it). A message
 * thread continued (`thread: {type: "continue", previous_message_id}`) from an id ending in `-<n>` is billed n
 * more input tokens, as the server bills the conversation it holds and reads again. Thinking sent back is billed
 * as Claude's newer models bill the earlier thinking they keep: a thinking block its words, a redacted_thinking
 * block one token per 4 characters of its data.
 */
export const fakeAnthropicKey = 'sk-ant-fake-key';

const errorTypes: Record<number, string> = {
  400: 'invalid_request_error',
  401: 'authentication_error',
  403: 'permission_error',
  404: 'not_found_error',
  429: 'rate_limit_error',
  500: 'api_error',
  529: 'overloaded_error',
};

type Content = MessagesRequest['messages'][number]['content'];

const blocksOf = (content: Content): ContentBlock[] =>
  typeof content === 'string' ? [{ type: 'text', text: content }] : content;

const toolUseIds = (content: Content): string[] =>
  blocksOf(content).flatMap((block) => (isKnownContentBlock(block) && block.type === 'tool_use' ? [block.id] : []));

/**
 * The real API's checks on a custom tool's input_schema: there is one, and it describes an object (the type is
 * required, and only `object`), with the API's validation messages.
 */
function inputSchemaError(tools: MessagesRequest['tools']): string | undefined {
  for (const [index, tool] of (tools ?? []).entries()) {
    if (!isClientTool(tool)) continue;
    if (tool.input_schema === undefined) return `tools.${index}.custom.input_schema: Field required`;
    if (tool.input_schema.type === undefined) return `tools.${index}.custom.input_schema.type: Field required`;
    if (tool.input_schema.type !== 'object') return `tools.${index}.custom.input_schema.type: Input should be 'object'`;
  }
  return undefined;
}

/**
 * What the API refuses of a schema it holds answers to (the answer's format, a strict tool's input), in its words:
 * a keyword it does not take ("For 'integer' type, property 'minimum' is not supported"), and an object not said
 * closed ("For 'object' type, 'additionalProperties' must be explicitly set to false").
 */
function heldSchemaError(schema: SchemaObject, field: string): string | undefined {
  const problem = (node: SchemaObject): string | undefined => {
    if (describesObject(node) && node.additionalProperties !== false)
      return node.additionalProperties === true
        ? "For 'object' type, 'additionalProperties: true' is not supported. Please set 'additionalProperties' to false"
        : "For 'object' type, 'additionalProperties' must be explicitly set to false";
    const refused = Object.keys(node).find((keyword) => heldAnswerRefuses(keyword, node[keyword]));
    return refused && `For '${String(node.type)}' type, property '${refused}' is not supported`;
  };
  const node = findSchemaObject(schema, (candidate) => problem(candidate) !== undefined);
  return node && `${field}: ${problem(node)}`;
}

/** The schemas the API holds answers to: the answer's format and strict tools' inputs, each checked. */
function heldSchemasError(body: MessagesRequest): string | undefined {
  const format = body.output_config?.format ?? body.output_format;
  const field = body.output_config?.format ? 'output_config.format.schema' : 'output_format.schema';
  if (format !== undefined && isKnownOutputFormat(format)) {
    const error = heldSchemaError(format.schema, field);
    if (error) return error;
  }
  for (const [index, tool] of (body.tools ?? []).entries()) {
    if (!isClientTool(tool) || tool.strict !== true || tool.input_schema === undefined) continue;
    const error = heldSchemaError(tool.input_schema, `tools.${index}.custom.input_schema`);
    if (error) return error;
  }
  return undefined;
}

/**
 * The real API's checks on tools: every custom tool's input_schema an object's, and without a keyword a strict
 * one refuses; an answer format's schema without one either; tool results answer the turn before.
 */
function toolError(body: MessagesRequest): string | undefined {
  const schemaError = inputSchemaError(body.tools) ?? heldSchemasError(body);
  if (schemaError) return schemaError;
  const messages = body.messages ?? [];
  for (const [index, message] of messages.entries()) {
    const previous = messages[index - 1];
    const calls = previous?.role === 'assistant' ? toolUseIds(previous.content) : [];
    for (const block of blocksOf(message.content)) {
      if (isKnownContentBlock(block) && block.type === 'tool_result' && !calls.includes(block.tool_use_id)) {
        return `messages.${index}.content: unexpected \`tool_use_id\` found in \`tool_result\` blocks: ${block.tool_use_id}. Each \`tool_result\` block must have a corresponding \`tool_use\` block in the previous message.`;
      }
    }
  }
  return undefined;
}

/** The signature of the fake's thinking blocks, which a replayed thinking block must carry. */
export const fakeThinkingSignature = 'EqQBCkgIBxABGAIiQFakeSignatureOfTheAnthropicFake';
const thinkingText = 'Let me think about this.';
/** The encrypted thinking of the redacted_thinking block `fake-thinking` answers with. */
const redactedThinkingData = 'EmwKAhgBEgy3va3pzix/LafPsn4aDFIT2Xlxh0L5L8rLVyIwxtE3rAFBa8cr3qpP';

/**
 * The real API's refusals of a request with thinking enabled (Anthropic's extended thinking guide: "Feature
 * compatibility", "Extended thinking with tool use", the budget's bounds), with the wording the API is reported
 * to use; the wording of the top_k and prefill refusals is the fake's own. The guide now says the API turns
 * thinking off, rather than refusing, for a turn of tool use that did not begin with a thinking block: the fake
 * refuses it as the API long did, so that a request relying on either is seen.
 */
function thinkingError(body: MessagesRequest, betas: string): string | undefined {
  const thinking = body.thinking;
  if (thinking === undefined || !isKnownThinkingConfig(thinking) || thinking.type !== 'enabled') return undefined;
  if (thinking.budget_tokens < 1024)
    return 'thinking.enabled.budget_tokens: Input should be greater than or equal to 1024';
  // Interleaved thinking's budget is the whole turn's, which may pass the answer's limit.
  if (body.max_tokens <= thinking.budget_tokens && !betas.includes('interleaved-thinking-2025-05-14'))
    return '`max_tokens` must be greater than `thinking.budget_tokens`';
  if (body.temperature !== undefined && body.temperature !== 1)
    return '`temperature` may only be set to 1 when thinking is enabled or in adaptive mode';
  if (body.top_k !== undefined) return '`top_k` may not be set when thinking is enabled';
  if (body.top_p !== undefined && body.top_p < 0.95)
    return '`top_p` must be greater than or equal to 0.95 or unset when thinking is enabled or in adaptive mode';
  if (body.tool_choice?.type === 'any' || body.tool_choice?.type === 'tool')
    return 'Thinking may not be enabled when tool_choice forces tool use.';
  return turnError(body.messages);
}

/** With thinking: no prefill, and a turn of tool use continued only after the signed thinking block that began it. */
function turnError(messages: MessagesRequest['messages']): string | undefined {
  const last = messages.at(-1);
  if (last?.role === 'assistant') return 'Prefilling the assistant message is not supported when thinking is enabled.';
  const answersTools = last !== undefined && blocksOf(last.content).some((block) => block.type === 'tool_result');
  if (!answersTools) return undefined;
  const index = messages.length - 2;
  const [first] = blocksOf(messages[index]?.content ?? []);
  if (first?.type === 'redacted_thinking') return undefined;
  if (first === undefined || !isKnownContentBlock(first) || first.type !== 'thinking')
    return `messages.${index}.content.0.type: Expected \`thinking\` or \`redacted_thinking\`, but found \`${first?.type ?? 'nothing'}\`. When \`thinking\` is enabled, a final \`assistant\` message must start with a thinking block (preceeding the lastmost set of \`tool_use\` and \`tool_result\` blocks). To avoid this requirement, disable \`thinking\`.`;
  if (first.signature !== fakeThinkingSignature)
    return `messages.${index}.content.0: Invalid \`signature\` in \`thinking\` block`;
  return undefined;
}

function sendError(response: ServerResponse, status: number, message: string): void {
  const body = {
    type: 'error' as const,
    error: { type: errorTypes[status] ?? 'api_error', message },
    request_id: 'req_fake',
  };
  writeJson<AnthropicError>(response, { status, body, headers: { 'request-id': 'req_fake' } });
}

const isMessagesRequest = wireCheck(MessagesRequest);
const isContinuedThread = wireCheck(
  Type.Object({ type: Type.Literal('continue'), previous_message_id: Type.String() }),
);

/** Input tokens of the conversation a continued thread holds: n for a previous message id ending in `-<n>`. */
function threadTokens(thread: unknown): number {
  return isContinuedThread(thread) ? Number(/-(\d+)$/.exec(thread.previous_message_id)?.[1] ?? 0) : 0;
}

const textOf = (content: Content | undefined): string =>
  typeof content === 'string'
    ? content
    : (content ?? [])
        .map((block) =>
          !isKnownContentBlock(block)
            ? ''
            : block.type === 'text'
              ? block.text
              : block.type === 'tool_result'
                ? textOf(block.content)
                : '',
        )
        .join('');
const wordsOf = (text: string) => text.split(/\s+/).filter(Boolean);

/** Input tokens of the thinking the messages send back (see the header). */
function thinkingTokens(messages: MessagesRequest['messages']): number {
  let tokens = 0;
  for (const message of messages)
    for (const block of blocksOf(message.content)) {
      if (!isKnownContentBlock(block)) continue;
      if (block.type === 'thinking') tokens += wordsOf(block.thinking).length;
      else if (block.type === 'redacted_thinking') tokens += Math.ceil(block.data.length / 4);
    }
  return tokens;
}

/** The names of the tools the last assistant turn called: those whose results the turn after it answers. */
function calledBefore(messages: MessagesRequest['messages']): Set<string> {
  const turn = messages.findLast((message) => message.role === 'assistant');
  const blocks = turn === undefined ? [] : blocksOf(turn.content);
  return new Set(
    blocks.flatMap((block) => (isKnownContentBlock(block) && block.type === 'tool_use' ? [block.name] : [])),
  );
}

/**
 * The tool the model calls: none under `tool_choice: none`; the one named under `tool`. A turn answering calls with
 * their results is answered in words, unless the choice is `any`, which forces a call whatever came before (as the
 * real API does): then the first tool the last turn did not call (a model moving on), or the first. Otherwise the
 * first tool.
 */
function calledTool(body: MessagesRequest, answersTools: boolean): string | undefined {
  const choice = body.tool_choice;
  if (choice?.type === 'none') return undefined;
  if (choice?.type === 'tool') return choice.name;
  if (!answersTools) return body.tools?.[0]?.name;
  if (choice?.type !== 'any') return undefined;
  const called = calledBefore(body.messages);
  return (
    (body.tools ?? []).find((tool) => tool.name !== undefined && !called.has(tool.name))?.name ?? body.tools?.[0]?.name
  );
}

/** The input_schema of the custom tool named `name`. */
function inputSchemaOf(tools: MessagesRequest['tools'], name: string | undefined): unknown {
  const tool = (tools ?? []).find((candidate) => candidate.name === name);
  return tool && isClientTool(tool) ? tool.input_schema : undefined;
}

async function messages(request: RecordedRequest, response: ServerResponse): Promise<void> {
  if (request.headers['x-api-key'] !== fakeAnthropicKey) return sendError(response, 401, 'invalid x-api-key');
  if (!request.headers['anthropic-version']) return sendError(response, 400, 'anthropic-version: header is required');
  if (!isMessagesRequest(request.body)) {
    const maxTokens = objectOf(request.body)?.max_tokens;
    return sendError(
      response,
      400,
      typeof maxTokens === 'number'
        ? 'The request body does not follow the messages schema.'
        : 'max_tokens: Field required',
    );
  }
  const body = request.body;
  const failure = /^fake-error-(\d{3})$/.exec(body.model);
  if (failure) return sendError(response, Number(failure[1]), `The fake failed with ${failure[1]}`);
  const betas = request.headers['anthropic-beta'];
  const invalid = toolError(body) ?? thinkingError(body, Array.isArray(betas) ? betas.join(',') : (betas ?? ''));
  if (invalid) return sendError(response, 400, invalid);
  const thinks =
    body.model === 'fake-thinking' ||
    (body.thinking !== undefined && isKnownThinkingConfig(body.thinking) && body.thinking.type === 'enabled');
  const redacted = body.model === 'fake-thinking';
  const thought = thinks ? wordsOf(thinkingText).length : 0;
  const lastUser = body.messages.filter((message) => message.role === 'user').at(-1);
  const answersTools =
    lastUser !== undefined && blocksOf(lastUser.content).some((block) => block.type === 'tool_result');
  const tool = calledTool(body, answersTools);
  const echo = `Echo: ${lastUser ? textOf(lastUser.content) : ''}`;
  const format = body.output_config?.format ?? body.output_format;
  const answer = format !== undefined && isKnownOutputFormat(format) ? jsonAnswer(format.schema, echo) : echo;
  let words = wordsOf(tool ? 'Let me look.' : answer);
  let stopReason = 'end_turn';
  if (words.length > body.max_tokens) {
    words = words.slice(0, body.max_tokens);
    stopReason = 'max_tokens';
  }
  if (tool) stopReason = 'tool_use';
  const toolInput = toolArguments(inputSchemaOf(body.tools, tool), lastUser ? textOf(lastUser.content) : '');
  const input = JSON.stringify(toolInput);
  const toolUse = { type: 'tool_use' as const, id: 'toolu_fake01', name: tool ?? '' };
  const inputTokens =
    body.messages.reduce((sum, message) => sum + wordsOf(textOf(message.content)).length, 0) +
    wordsOf(textOf(body.system)).length +
    threadTokens(body.thread) +
    thinkingTokens(body.messages);
  const cacheRead = body.model === 'fake-cached' ? 1_000 : 0;
  const message = {
    id: 'msg_fake01',
    type: 'message' as const,
    role: 'assistant',
    model: body.model,
    content: [],
    stop_reason: null,
    stop_sequence: null,
  };
  if (!body.stream) {
    const whole = {
      ...message,
      content: [
        ...(thinks ? [{ type: 'thinking', thinking: thinkingText, signature: fakeThinkingSignature }] : []),
        ...(redacted ? [{ type: 'redacted_thinking', data: redactedThinkingData }] : []),
        { type: 'text', text: words.join(' ') },
        ...(tool ? [{ ...toolUse, input: toolInput }] : []),
      ],
      stop_reason: stopReason,
      usage: {
        input_tokens: inputTokens,
        output_tokens: thought + words.length,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cacheRead,
        service_tier: 'standard',
      },
    };
    return writeJson<Message>(response, { status: 200, body: whole, headers: { 'request-id': 'req_fake' } });
  }
  response.writeHead(200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'request-id': 'req_fake',
  });
  const send = (type: string, data: object) => {
    const event = { type, ...data };
    response.write(sseEvent<MessagesStreamEvent>(event, type));
  };
  send('message_start', {
    message: {
      ...message,
      usage: {
        input_tokens: inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: cacheRead,
        output_tokens: 1,
        service_tier: 'standard',
      },
    },
  });
  // The thinking blocks, when there are any, come first; the text and the call follow them.
  const text = (thinks ? 1 : 0) + (redacted ? 1 : 0);
  if (thinks) {
    send('content_block_start', { index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } });
    send('content_block_delta', { index: 0, delta: { type: 'thinking_delta', thinking: thinkingText } });
    send('content_block_delta', { index: 0, delta: { type: 'signature_delta', signature: fakeThinkingSignature } });
    send('content_block_stop', { index: 0 });
  }
  if (redacted) {
    send('content_block_start', { index: 1, content_block: { type: 'redacted_thinking', data: redactedThinkingData } });
    send('content_block_stop', { index: 1 });
  }
  send('content_block_start', { index: text, content_block: { type: 'text', text: '' } });
  send('ping', {});
  for (const [index, word] of words.entries()) {
    send('content_block_delta', { index: text, delta: { type: 'text_delta', text: index === 0 ? word : ` ${word}` } });
    if (index === 0 && body.model === 'fake-cut') {
      await sleep(50);
      response.socket?.destroy();
      return;
    }
    if (index === 0 && body.model === 'fake-stream-error') {
      const overloaded: AnthropicError = { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } };
      response.end(sseEvent(overloaded, 'error'));
      return;
    }
  }
  send('content_block_stop', { index: text });
  if (tool) {
    send('content_block_start', { index: text + 1, content_block: { ...toolUse, input: {} } });
    for (const fragment of ['', input.slice(0, 5), input.slice(5)])
      send('content_block_delta', { index: text + 1, delta: { type: 'input_json_delta', partial_json: fragment } });
    send('content_block_stop', { index: text + 1 });
  }
  send('message_delta', {
    delta: { stop_reason: stopReason, stop_sequence: null },
    usage:
      body.model === 'fake-cached'
        ? {
            input_tokens: inputTokens,
            cache_creation_input_tokens: null,
            cache_read_input_tokens: null,
            output_tokens: thought + words.length,
          }
        : { output_tokens: thought + words.length },
  });
  send('message_stop', {});
  response.end();
}

export function startAnthropicFake(): Promise<FakeServer> {
  return startFakeServer(async (request, response) => {
    if (request.method === 'POST' && request.path === '/v1/messages') return messages(request, response);
    sendError(response, 404, `Not found: ${request.method} ${request.path}`);
  });
}
