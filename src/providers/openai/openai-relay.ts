import { DeliveredOutput } from '../../domain/delivered-output.ts';
import {
  isChatCompletion,
  isChatCompletionChunk,
  streamTerminator,
  usageOf,
} from '../../protocols/openai/chat-completions.ts';
import {
  failedResponsesEvents,
  isResponseObject,
  isResponsesStreamEvent,
  openAiOnlyResponsesFields,
  responsesUsageOf,
  terminalResponsesEvents,
} from '../../protocols/openai/responses.ts';
import type { CallOptions, RawExchange, RelayMeter, RelayOperation, RelayRequest } from '../provider-adapter.ts';
import { checkedRelay, type AnswerShapes } from '../shared/checked-relay.ts';
import { jsonRelayMeter, streamRelayMeter } from '../shared/relay-meters.ts';
import { sseSplitter } from '../shared/stream-splitters.ts';
import type { UpstreamHttp } from '../shared/upstream-http.ts';
import { isOpenAiItself } from './openai-chat.ts';

/**
 * What OpenAI itself and OpenAI-compatible upstreams each accept. The `provider` routing object is meant for
 * routing providers; OpenAI refuses unknown fields. The Responses API's stateful and reasoning fields, and
 * tools other than functions, are OpenAI's own.
 */
function forUpstream(
  operation: RelayOperation,
  baseUrl: string,
  body: Readonly<Record<string, unknown>>,
): { forwarded: Readonly<Record<string, unknown>>; dropped: string[] } {
  const native = isOpenAiItself(baseUrl);
  const forwarded: Record<string, unknown> = { ...body };
  const dropped: string[] = [];
  if (native) {
    delete forwarded.provider;
    // OpenAI's reasoning models refuse the older `max_tokens`; every chat model takes `max_completion_tokens`.
    if (operation === 'chat-completions' && forwarded.max_tokens !== undefined) {
      forwarded.max_completion_tokens ??= forwarded.max_tokens;
      delete forwarded.max_tokens;
    }
    return { forwarded, dropped };
  }
  if (operation === 'responses') {
    for (const field of openAiOnlyResponsesFields) {
      if (field in forwarded) dropped.push(field);
      delete forwarded[field];
    }
    if (Array.isArray(body.tools)) {
      const functions = body.tools.filter(
        (tool: unknown) => typeof tool === 'object' && tool !== null && 'type' in tool && tool.type === 'function',
      );
      if (functions.length < body.tools.length) dropped.push('tools');
      forwarded.tools = functions;
    }
  }
  return { forwarded, dropped };
}

type OpenAiOperation = Extract<RelayOperation, 'chat-completions' | 'responses'>;

/** Each operation's path and the shapes of its answers. */
const operations: Record<OpenAiOperation, AnswerShapes & { path: string }> = {
  'chat-completions': {
    path: '/chat/completions',
    answer: isChatCompletion,
    event: isChatCompletionChunk,
    what: 'a chat completion',
    terminator: streamTerminator,
  },
  responses: {
    path: '/responses',
    answer: isResponseObject,
    event: isResponsesStreamEvent,
    what: 'a response',
    terminator: streamTerminator,
  },
};

export async function relayOpenAi(
  http: UpstreamHttp,
  { operation, body }: RelayRequest,
  options: CallOptions,
): Promise<RawExchange> {
  if (operation !== 'chat-completions' && operation !== 'responses')
    throw new Error(`the OpenAI protocol has no ${operation} operation`);
  const shape = operations[operation];
  const { forwarded, dropped } = forUpstream(operation, options.target.baseUrl, body);
  const response = await http.postJson(
    options.target,
    shape.path,
    { authorization: options.target.apiKey.bearer() },
    forwarded,
  );
  return {
    ...(await checkedRelay(
      response,
      shape,
      body.stream === true ? sseSplitter(options.target.maxEventCharacters) : undefined,
    )),
    dropped,
  };
}

/** Reads usage from a Responses answer: the JSON body, or the terminal event of a stream. */
function responsesMeter(streaming: boolean, maxEventCharacters: number): RelayMeter {
  if (!streaming) return jsonRelayMeter(isResponseObject, (answer) => ({ usage: responsesUsageOf(answer.usage) }));
  return streamRelayMeter(
    sseSplitter(maxEventCharacters),
    isResponsesStreamEvent,
    (reading, event) => {
      if (terminalResponsesEvents.has(event.type)) reading.complete = true;
      if (failedResponsesEvents.has(event.type)) reading.sawError = true;
      if (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta')
        reading.output.add(event.delta ?? '');
      reading.usage = responsesUsageOf(event.response?.usage) ?? reading.usage;
    },
    // OpenAI ends a Responses stream without it; some compatible servers send it as on chat streams, after the end.
    { data: streamTerminator, completes: false },
  );
}

/** Reads `usage` from a chat completion or a Responses answer: the JSON body, or the usage-carrying event of a stream. */
export function openAiRelayMeter(
  operation: RelayOperation,
  streaming: boolean,
  maxEventCharacters: number,
): RelayMeter {
  if (operation === 'responses') return responsesMeter(streaming, maxEventCharacters);
  if (!streaming) {
    return jsonRelayMeter(isChatCompletion, (answer) => {
      const output = new DeliveredOutput();
      for (const { message } of answer.choices) {
        output.add(message.content ?? '');
        for (const call of message.tool_calls ?? []) output.add(call.function.name + call.function.arguments);
      }
      return { usage: usageOf(answer.usage), output };
    });
  }
  return streamRelayMeter(
    sseSplitter(maxEventCharacters),
    isChatCompletionChunk,
    (reading, chunk) => {
      if (chunk.error !== undefined) reading.sawError = true;
      for (const choice of chunk.choices ?? []) {
        reading.output.add(choice.delta?.content ?? '');
        for (const call of choice.delta?.tool_calls ?? [])
          reading.output.add((call.function?.name ?? '') + (call.function?.arguments ?? ''));
      }
      reading.usage = usageOf(chunk.usage) ?? reading.usage;
      if (chunk.choices?.some((choice) => choice.finish_reason)) reading.complete = true;
    },
    { data: streamTerminator, completes: true },
  );
}
