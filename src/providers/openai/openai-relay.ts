import type { TokenUsage } from '../../domain/chat.ts';
import { countedUsage, DeliveredOutput } from '../../domain/delivered-output.ts';
import {
  chatReadsServerInput,
  isChatCompletion,
  isChatCompletionChunk,
  streamTerminator,
  usageOf,
  type ChatCompletionChunk,
} from '../../protocols/openai/chat-completions.ts';
import {
  failedResponsesEvents,
  isResponseObject,
  isResponsesFunctionTool,
  isResponsesStreamEvent,
  openAiOnlyResponsesFields,
  responsesUsageOf,
  responsesReadsServerInput,
  terminalResponsesEvents,
  type ResponsesStreamEvent,
} from '../../protocols/openai/responses.ts';
import type {
  CallOptions,
  RawExchange,
  RelayMeter,
  RelayMeterOptions,
  RelayOperation,
  RelayRequest,
} from '../provider-adapter.ts';
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
  native: boolean,
  body: Readonly<Record<string, unknown>>,
): { forwarded: Readonly<Record<string, unknown>>; dropped: string[] } {
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
      const functions = body.tools.filter(isResponsesFunctionTool);
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
  const native = isOpenAiItself(options.target.baseUrl);
  const { forwarded, dropped } = forUpstream(operation, native, body);
  const response = await http.postJson(options.target, {
    path: shape.path,
    headers: { authorization: options.target.apiKey.bearer() },
    body: forwarded,
  });
  return {
    ...(await checkedRelay(
      response,
      shape,
      body.stream === true ? { split: sseSplitter(options.target.maxEventCharacters), meteredHead: true } : undefined,
    )),
    dropped,
    // Read from what is forwarded: fields another server is not sent (stored responses, built-in tools) make it
    // read nothing.
    ...(readsServerInput[operation](forwarded) ? { unseenInput: true } : {}),
  };
}

/** Whether a request makes the upstream read input it only names (held or retrieved), per operation. */
const readsServerInput: Record<OpenAiOperation, (body: Readonly<Record<string, unknown>>) => boolean> = {
  'chat-completions': chatReadsServerInput,
  responses: responsesReadsServerInput,
};

/** An SSE event as the protocol writes it. */
const sseEvent = (payload: object, name?: string) =>
  `${name ? `event: ${name}\n` : ''}data: ${JSON.stringify(payload)}\n\n`;

/** Reads usage from a Responses answer: the JSON body, or the terminal event of a stream. */
function responsesMeter({ streaming, maxEventCharacters, limit, servedAs, whole }: RelayMeterOptions): RelayMeter {
  if (!streaming)
    return jsonRelayMeter(isResponseObject, (answer) => ({ usage: responsesUsageOf(answer.usage) }), {
      limit,
      servedAs,
      alreadyRead: whole,
      lengthFinished: (answer) => ({ ...answer, status: 'incomplete', incomplete_details: lengthIncomplete }),
    });
  // The Response as the stream opened it and the output so far: what a cut stream's end repeats.
  let opened: ResponsesStreamEvent['response'];
  const output = new ResponseOutput();
  return streamRelayMeter(
    {
      split: sseSplitter(maxEventCharacters),
      check: isResponsesStreamEvent,
      observe: (reading, event) => {
        if (terminalResponsesEvents.has(event.type)) reading.complete = true;
        if (failedResponsesEvents.has(event.type)) reading.sawError = true;
        if (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta')
          reading.output.add(event.delta ?? '');
        reading.usage = responsesUsageOf(event.response?.usage) ?? reading.usage;
        reading.lastSequenceNumber = event.sequence_number ?? reading.lastSequenceNumber;
      },
      follow: (event) => {
        opened ??= event.response;
        output.follow(event);
      },
      // OpenAI ends a Responses stream without it; some compatible servers send it as on chat streams, after the end.
      terminator: { data: streamTerminator, completes: false },
      lengthFinish: ({ lastSequenceNumber }) =>
        sseEvent(
          {
            type: 'response.incomplete',
            ...(lastSequenceNumber !== undefined ? { sequence_number: lastSequenceNumber + 1 } : {}),
            response: {
              ...opened,
              object: 'response',
              status: 'incomplete',
              incomplete_details: lengthIncomplete,
              output: output.items(),
              usage: null,
            },
          },
          'response.incomplete',
        ),
    },
    { limit, servedAs },
  );
}

type OutputItem = NonNullable<ResponsesStreamEvent['item']>;

/**
 * The output items of a Responses stream as its events built them: each as its `output_item.done` event
 * gave it, or, while still open, as added with the text or arguments streamed into it so far.
 */
class ResponseOutput {
  private readonly entries = new Map<number, { item: OutputItem; done: boolean; pieces: string[] }>();

  follow(event: ResponsesStreamEvent): void {
    const index = event.output_index;
    if (index === undefined) return;
    if (event.type === 'response.output_item.added' && event.item)
      this.entries.set(index, { item: event.item, done: false, pieces: [] });
    else if (event.type === 'response.output_item.done' && event.item)
      this.entries.set(index, { item: event.item, done: true, pieces: [] });
    else if (event.type === 'response.output_text.delta' || event.type === 'response.function_call_arguments.delta')
      this.entries.get(index)?.pieces.push(event.delta ?? '');
  }

  items(): object[] {
    return [...this.entries.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, { item, done, pieces }]) => {
        if (done) return item;
        const streamed = pieces.join('');
        if (item.type === 'message')
          return { ...item, status: 'incomplete', content: [{ type: 'output_text', text: streamed, annotations: [] }] };
        if (item.type === 'function_call') return { ...item, status: 'incomplete', arguments: streamed };
        return { ...item, status: 'incomplete' };
      });
  }
}

/** Why a Response cut by the output limit is incomplete. */
const lengthIncomplete = { reason: 'max_output_tokens' };

/** Usage as a chat completion states it. */
const wireChatUsage = ({ inputTokens, outputTokens }: TokenUsage) => ({
  prompt_tokens: inputTokens,
  completion_tokens: outputTokens,
  total_tokens: inputTokens + outputTokens,
});

/** Reads `usage` from a chat completion or a Responses answer: the JSON body, or the usage-carrying event of a stream. */
export function openAiRelayMeter(operation: RelayOperation, options: RelayMeterOptions): RelayMeter {
  if (operation === 'responses') return responsesMeter(options);
  const { streaming, maxEventCharacters, limit, servedAs, whole, promptTokens } = options;
  if (!streaming) {
    return jsonRelayMeter(
      isChatCompletion,
      (answer) => {
        const output = new DeliveredOutput();
        for (const { message } of answer.choices) {
          output.add(message.content ?? '');
          for (const call of message.tool_calls ?? []) output.add(call.function.name + call.function.arguments);
        }
        return { usage: usageOf(answer.usage), output };
      },
      {
        limit,
        servedAs,
        alreadyRead: whole,
        lengthFinished: (answer) => ({
          ...answer,
          choices: answer.choices.map((choice) => ({ ...choice, finish_reason: 'length' })),
        }),
      },
    );
  }
  // What a cut stream's last chunk repeats of the others, and the choices still open.
  const last: Pick<ChatCompletionChunk, 'id' | 'created' | 'model'> = {};
  const open = new Set<number>();
  return streamRelayMeter(
    {
      split: sseSplitter(maxEventCharacters),
      check: isChatCompletionChunk,
      observe: (reading, chunk) => {
        if (chunk.error !== undefined) reading.sawError = true;
        for (const choice of chunk.choices ?? []) {
          reading.output.add(choice.delta?.content ?? '');
          for (const call of choice.delta?.tool_calls ?? [])
            reading.output.add((call.function?.name ?? '') + (call.function?.arguments ?? ''));
        }
        reading.usage = usageOf(chunk.usage) ?? reading.usage;
        if (chunk.choices?.some((choice) => choice.finish_reason)) reading.complete = true;
      },
      follow: (chunk) => {
        const choices = chunk.choices ?? [];
        for (let position = 0; position < choices.length; position++) {
          const choice = choices[position]!;
          const index = choice.index ?? position;
          if (choice.finish_reason) open.delete(index);
          else open.add(index);
        }
        last.id = chunk.id ?? last.id;
        last.created = chunk.created ?? last.created;
        last.model = chunk.model ?? last.model;
      },
      terminator: { data: streamTerminator, completes: true },
      // The finish of each choice still open, then the usage chunk the stream was asked for (`include_usage` is
      // forced on), with what the answer is billed: the upstream sends its own only at the end it never reached.
      lengthFinish: (reading) =>
        sseEvent({
          ...last,
          object: 'chat.completion.chunk',
          choices: [...(open.size > 0 ? open : [0])].map((index) => ({
            index,
            delta: {},
            finish_reason: 'length',
          })),
        }) +
        (promptTokens === undefined
          ? ''
          : sseEvent({
              ...last,
              object: 'chat.completion.chunk',
              choices: [],
              usage: wireChatUsage(countedUsage(reading.usage, reading.output, promptTokens)),
            })),
    },
    { limit, servedAs },
  );
}
