import type { RelayTerms } from '../../gateway/text-generation.ts';
import { randomBytes } from 'node:crypto';
import {
  compactContent,
  imageFromUrl,
  leftOut,
  nameToolResults,
  newInputNotes,
  partsOf,
  contentInParts,
  toolResultText,
  unkeptFormatName,
  type ChatMessage,
  type ChatPart,
  type ChatStreamEvent,
  type DecodedChat,
  type InputNotes,
} from '../../domain/chat.ts';
import { decodeFunctionTools, decodeResponseFormat, decodeToolChoice } from './chat-completions-codec.ts';
import { plainCallId } from '../../domain/call-ids.ts';
import { requireToolTextsWithin } from '../../domain/nesting.ts';
import type { CollectedAnswer } from '../../gateway/collected-answer.ts';
import { clientFieldNames, nativeParameters } from '../../catalog/capability-gate.ts';
import {
  isFunctionCallItem,
  isFunctionCallOutputItem,
  isInputImagePart,
  isItemReference,
  isResponsesFunctionTool,
  isResponsesJsonSchemaFormat,
  isResponsesMessageItem,
  isResponsesNamedToolChoice,
  isResponsesTextPart,
  responseEndOf,
  type ResponseEnd,
  wireResponsesUsage,
  type ResponsesInputItem,
  type ResponsesMessageItem,
  type ResponsesRequest,
} from '../../protocols/openai/responses.ts';
import { isRefusalPart } from '../../protocols/openai/chat-completions.ts';

/** Wire field -> native parameter name, for the capability gate. */
export const gatedFields: Readonly<Record<string, string>> = {
  max_output_tokens: 'maxTokens',
  temperature: 'temperature',
  top_p: 'topP',
  tools: 'tools',
  tool_choice: 'toolChoice',
  parallel_tool_calls: 'parallelToolCalls',
};

/** The gated parameters of a Responses request, by native name: its top-level fields and those inside `text`. */
export function gatedParametersOf(body: ResponsesRequest): Record<string, unknown> {
  const { format, verbosity } = body.text ?? {};
  return {
    ...nativeParameters(body, gatedFields),
    ...(format !== undefined ? { responseFormat: format } : {}),
    ...(verbosity !== undefined ? { verbosity } : {}),
  };
}

/** How the request named its gated parameters: its top-level fields, and those inside `text`. */
export function gatedFieldNamesOf(body: ResponsesRequest): Record<string, string> {
  return {
    ...clientFieldNames(body, gatedFields),
    responseFormat: 'text.format',
    structuredOutputs: 'text.format.strict',
    strictTools: 'tools.strict',
    verbosity: 'text.verbosity',
  };
}

const roles: Record<string, ChatMessage['role'] | undefined> = {
  system: 'system',
  developer: 'system',
  user: 'user',
  assistant: 'assistant',
};

function contentParts(content: ResponsesMessageItem['content'], notes: InputNotes): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: ChatPart[] = [];
  for (const part of content) {
    if (isResponsesTextPart(part)) parts.push({ type: 'text', text: part.text });
    // A refused answer's output item sent back: what the model said in refusing is the assistant's words.
    else if (isRefusalPart(part)) parts.push({ type: 'text', text: part.refusal });
    else if (isInputImagePart(part) && typeof part.image_url === 'string')
      parts.push({ type: 'image', image: imageFromUrl(part.image_url) });
    else leftOut(notes, `"${part.type}" content parts`);
  }
  return parts;
}

/**
 * Adds parts to the conversation's last message when it has `role`, else as a new message (a call joins the
 * text before it). The messages' part arrays are this decoder's own, so they grow in place: linear in the items.
 */
function append(messages: ChatMessage[], role: ChatMessage['role'], parts: ChatPart[]): void {
  const last = messages.at(-1);
  if (last?.role !== role || role === 'user' || role === 'system') {
    messages.push({ role, content: parts });
    return;
  }
  if (typeof last.content === 'string') last.content = [...partsOf(last.content), ...parts];
  else for (const part of parts) (last.content as ChatPart[]).push(part);
}

/** The ids of output items that only say what the model wrote or thought: a message's text, a reasoning summary. */
const wordsItemId = /^(?:msg|rs)_/;

export function decodeResponsesInput(body: ResponsesRequest): DecodedChat {
  const notes = newInputNotes();
  const notTranslated = new Set<string>();
  const messages: ChatMessage[] = [];
  if (body.instructions !== undefined) messages.push({ role: 'system', content: body.instructions });
  const items: ResponsesInputItem[] =
    typeof body.input === 'string' ? [{ role: 'user', content: body.input }] : body.input;
  for (const [index, item] of items.entries()) {
    if (isFunctionCallItem(item)) {
      const call: ChatPart[] = [
        { type: 'tool-call', call: { id: item.call_id, name: item.name, arguments: item.arguments } },
      ];
      requireToolTextsWithin(call, `body.input.${index}`);
      append(messages, 'assistant', call);
      continue;
    }
    if (isFunctionCallOutputItem(item)) {
      const parts = contentParts(item.output, notes);
      // A tool result is text in the other protocols and to the bound: a picture in it has no place there.
      if (parts.some((part) => part.type === 'image')) leftOut(notes, 'images in function_call_output items');
      const output = typeof item.output === 'string' ? item.output : toolResultText(parts);
      const result: ChatPart[] = [{ type: 'tool-result', result: { callId: item.call_id, name: '', output } }];
      requireToolTextsWithin(result, `body.input.${index}`);
      append(messages, 'tool', result);
      continue;
    }
    // Clients keeping Responses state (the AI SDK's default `store: true`) name the text and reasoning of
    // earlier answers by id rather than send them; only OpenAI holds them. Translated, the turn goes without
    // those words (named); its calls and their results, always sent whole, carry the loop on. Relayed, the
    // server reads what they name, which the bound never sees.
    if (isItemReference(item) && wordsItemId.test(item.id)) {
      notTranslated.add('input.item_reference');
      notes.uncounted = true;
      continue;
    }
    // A reasoning model's earlier thinking, sent back whole: the other protocols take no thinking of another
    // model (as beta's thinking blocks), so the turn goes without it, named. Relayed, the model reads it again
    // (billed as input), and the bound counts none of it.
    if (item.type === 'reasoning') {
      notTranslated.add('input.reasoning');
      notes.uncounted = true;
      continue;
    }
    const role = isResponsesMessageItem(item) ? roles[item.role] : undefined;
    if (!isResponsesMessageItem(item) || !role) {
      leftOut(notes, `"${String(item.type ?? item.role)}" input items`);
      continue;
    }
    const parts = contentParts(item.content, notes);
    // The client's own text parts (system, developer, user) stay parts; an assistant's are one text.
    messages.push({ role, content: role === 'assistant' ? compactContent(parts) : contentInParts(parts) });
  }
  const { untranslatable } = notes;
  const tools = decodeFunctionTools(body.tools, {
    untranslatable,
    definitionOf: (tool) => (isResponsesFunctionTool(tool) ? tool : undefined),
    path: '',
    builtInKinds: true,
  });
  const toolChoice = decodeToolChoice(body.tool_choice, {
    untranslatable,
    named: (choice) => (isResponsesNamedToolChoice(choice) ? choice.name : undefined),
  });
  const text = body.text ?? {};
  const compacted = messages.map((message) =>
    typeof message.content === 'string' || message.role !== 'assistant'
      ? message
      : { ...message, content: compactContent(message.content) },
  );
  const named = nameToolResults(compacted);
  const responseFormat = decodeResponseFormat(
    text.format,
    (format) => (isResponsesJsonSchemaFormat(format) ? format : undefined),
    'body.text.format.schema',
  );
  // Translated, a protocol taking the schema alone goes without the format's name where its title says another.
  if (unkeptFormatName(responseFormat)) notTranslated.add('text.format.name');
  return {
    messages: named.messages,
    unmatchedToolResults: items.flatMap((item, index) =>
      isFunctionCallOutputItem(item) && named.unmatched.has(item.call_id) ? [`body.input[${index}].call_id`] : [],
    ),
    ...(tools ? { tools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    ...(typeof body.parallel_tool_calls === 'boolean' ? { parallelToolCalls: body.parallel_tool_calls } : {}),
    responseFormat,
    ...(typeof text.verbosity === 'string' ? { verbosity: text.verbosity } : {}),
    untranslatable: [...untranslatable],
    uncountedInput: notes.uncounted,
    notTranslated: [...notTranslated],
  };
}

export function relayBody(
  body: ResponsesRequest,
  { upstreamModel, droppedNativeNames, maxOutputTokens }: RelayTerms,
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel };
  for (const [field, native] of Object.entries(gatedFields))
    if (droppedNativeNames.includes(native)) delete forwarded[field];
  // The limit the reservation covers, whether or not the client set one.
  forwarded.max_output_tokens = maxOutputTokens;
  const text: Record<string, unknown> = { ...body.text };
  if (droppedNativeNames.includes('responseFormat')) delete text.format;
  if (droppedNativeNames.includes('verbosity')) delete text.verbosity;
  if (body.text !== undefined) forwarded.text = text;
  // Call ids the gateway gave out with a Gemini signature in them (domain/call-ids.ts): the protocol takes 64 characters.
  if (Array.isArray(body.input) && body.input.some((item) => plainCallIdOf(item) !== undefined))
    forwarded.input = body.input.map((item) => {
      const plain = plainCallIdOf(item);
      return plain === undefined ? item : { ...item, call_id: plain };
    });
  return forwarded;
}

/** An input item's call id without the signature it carries, or undefined when it carries none. */
function plainCallIdOf(item: ResponsesInputItem): string | undefined {
  if (!('call_id' in item) || typeof item.call_id !== 'string') return undefined;
  const plain = plainCallId(item.call_id);
  return plain === item.call_id ? undefined : plain;
}

type OutputItem =
  | { kind: 'message'; id: string; text: string }
  | { kind: 'call'; id: string; callId: string; name: string; arguments: string };

/** Builds Response objects and stream events for one translated answer: a message item for text, a function_call item per call. */
export class ResponseEncoder {
  private readonly id = `resp_${randomBytes(16).toString('hex')}`;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private readonly items: OutputItem[] = [];
  /** The tool call number -> its output index. */
  private readonly callItems = new Map<number, number>();
  private openItem: number | undefined;
  private sequence = 0;
  private started = false;

  /** `request`: what the client asked, which every Response echoes as the protocol does (clients read `text.format`). */
  constructor(
    private readonly model: string,
    request: ResponsesRequest,
  ) {
    this.echoed = {
      instructions: request.instructions ?? null,
      max_output_tokens: request.max_output_tokens ?? null,
      parallel_tool_calls: request.parallel_tool_calls ?? true,
      previous_response_id: null,
      temperature: request.temperature ?? 1,
      text: { format: { type: 'text' }, ...request.text },
      tool_choice: request.tool_choice ?? 'auto',
      tools: request.tools ?? [],
      top_p: request.top_p ?? 1,
      metadata: request.metadata ?? {},
    };
  }

  private readonly echoed: Readonly<Record<string, unknown>>;

  response(
    end: ResponseEnd | { status: 'in_progress' },
    finish?: Extract<ChatStreamEvent, { type: 'finish' }>,
  ): object {
    const done = end.status !== 'in_progress';
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status: end.status,
      error: null,
      incomplete_details: end.status === 'incomplete' ? { reason: end.reason } : null,
      model: this.model,
      output: done ? this.items.map((item) => itemJson(item, 'completed')) : [],
      ...this.echoed,
      usage: finish?.usage ? wireResponsesUsage(finish.usage) : null,
    };
  }

  /** A whole Response from a collected answer. */
  whole({ text, toolCalls, finish }: CollectedAnswer): object {
    if (text !== '' || toolCalls.length === 0) this.items.push(newMessage(text));
    for (const call of toolCalls)
      this.items.push({
        kind: 'call',
        id: `fc_${randomBytes(16).toString('hex')}`,
        callId: call.id,
        name: call.name,
        arguments: call.arguments,
      });
    return this.response(responseEndOf(finish?.finishReason), finish);
  }

  /** The stream's `error` event, numbered in sequence as every event is (clients check its schema). */
  failure(code: string, message: string): object {
    return { type: 'error', code, message, param: null, sequence_number: this.sequence++ };
  }

  /** The named stream events for one canonical event, in the protocol's order. */
  events(event: ChatStreamEvent): Array<[string, object]> {
    const out: Array<[string, object]> = [];
    const emit = (type: string, payload: object) =>
      out.push([type, { type, sequence_number: this.sequence++, ...payload }]);
    if (!this.started) {
      this.started = true;
      emit('response.created', { response: this.response({ status: 'in_progress' }) });
      emit('response.in_progress', { response: this.response({ status: 'in_progress' }) });
    }
    switch (event.type) {
      case 'text-delta': {
        let index = this.openItem;
        if (index === undefined || this.items[index]!.kind !== 'message') index = this.open(newMessage(''), emit);
        const item = this.items[index] as Extract<OutputItem, { kind: 'message' }>;
        item.text += event.text;
        emit('response.output_text.delta', {
          item_id: item.id,
          output_index: index,
          content_index: 0,
          delta: event.text,
          logprobs: [],
        });
        break;
      }
      case 'tool-call-start':
        this.callItems.set(
          event.index,
          this.open(
            {
              kind: 'call',
              id: `fc_${randomBytes(16).toString('hex')}`,
              callId: event.id,
              name: event.name,
              arguments: '',
            },
            emit,
          ),
        );
        break;
      case 'tool-call-delta': {
        const index = this.callItems.get(event.index);
        const item = index === undefined ? undefined : this.items[index];
        if (item?.kind !== 'call') break;
        item.arguments += event.arguments;
        emit('response.function_call_arguments.delta', {
          item_id: item.id,
          output_index: index,
          delta: event.arguments,
        });
        break;
      }
      case 'finish': {
        // An answer with nothing in it is still one (empty) message, as the protocol answers.
        if (this.items.length === 0) this.open(newMessage(''), emit);
        this.close(emit);
        const end = responseEndOf(event.finishReason);
        emit(end.status === 'completed' ? 'response.completed' : 'response.incomplete', {
          response: this.response(end, event),
        });
      }
    }
    return out;
  }

  /** Closes the open item and opens `item` after it; returns its output index. */
  private open(item: OutputItem, emit: (type: string, payload: object) => void): number {
    this.close(emit);
    const index = this.items.push(item) - 1;
    this.openItem = index;
    emit('response.output_item.added', { output_index: index, item: itemJson(item, 'in_progress') });
    if (item.kind === 'message')
      emit('response.content_part.added', {
        item_id: item.id,
        output_index: index,
        content_index: 0,
        part: { type: 'output_text', text: '', annotations: [] },
      });
    return index;
  }

  private close(emit: (type: string, payload: object) => void): void {
    const index = this.openItem;
    if (index === undefined) return;
    this.openItem = undefined;
    const item = this.items[index]!;
    if (item.kind === 'message') {
      const at = { item_id: item.id, output_index: index, content_index: 0 };
      emit('response.output_text.done', { ...at, text: item.text, logprobs: [] });
      emit('response.content_part.done', { ...at, part: { type: 'output_text', text: item.text, annotations: [] } });
    } else
      emit('response.function_call_arguments.done', {
        item_id: item.id,
        output_index: index,
        name: item.name,
        arguments: item.arguments,
      });
    emit('response.output_item.done', { output_index: index, item: itemJson(item, 'completed') });
  }
}

function newMessage(text: string): OutputItem {
  return { kind: 'message', id: `msg_${randomBytes(16).toString('hex')}`, text };
}

function itemJson(item: OutputItem, status: 'in_progress' | 'completed'): object {
  if (item.kind === 'call')
    return {
      id: item.id,
      type: 'function_call',
      status,
      call_id: item.callId,
      name: item.name,
      arguments: status === 'completed' ? item.arguments : '',
    };
  return {
    id: item.id,
    type: 'message',
    status,
    role: 'assistant',
    content: status === 'completed' ? [{ type: 'output_text', text: item.text, annotations: [] }] : [],
  };
}
