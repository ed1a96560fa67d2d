import { randomBytes } from 'node:crypto';
import { compactContent, imageFromUrl, type ChatMessage, type ChatPart, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import type { CollectedAnswer } from '../../gateway/text-generation.ts';

/** The alpha Responses request as this surface reads it; unknown fields are kept and forwarded. */
export interface ResponsesBody {
  model: string;
  input: string | unknown[];
  instructions?: string;
  stream?: boolean;
  max_output_tokens?: number;
  temperature?: number;
  top_p?: number;
  [field: string]: unknown;
}

/** Wire field -> native parameter name, for the capability gate. */
export const gatedFields: Readonly<Record<string, string>> = {
  max_output_tokens: 'maxTokens',
  temperature: 'temperature',
  top_p: 'topP',
  tools: 'tools',
  tool_choice: 'toolChoice',
  parallel_tool_calls: 'parallelToolCalls',
  reasoning: 'reasoningEffort',
};

const roles: Record<string, ChatMessage['role'] | undefined> = { system: 'system', developer: 'system', user: 'user', assistant: 'assistant' };

export function decodeResponsesInput(body: ResponsesBody): { messages: ChatMessage[]; untranslatable: string[] } {
  const untranslatable = new Set<string>();
  const messages: ChatMessage[] = [];
  if (body.instructions !== undefined) messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') messages.push({ role: 'user', content: body.input });
  else {
    for (const item of body.input as Array<{ type?: unknown; role?: unknown; content?: unknown }>) {
      const role = typeof item?.role === 'string' ? roles[item.role] : undefined;
      if ((item?.type !== undefined && item.type !== 'message') || !role) {
        untranslatable.add(`"${String(item?.type ?? item?.role)}" input items`);
        continue;
      }
      const parts: ChatPart[] = [];
      if (typeof item.content === 'string') parts.push({ type: 'text', text: item.content });
      else if (Array.isArray(item.content)) {
        for (const part of item.content as Array<{ type?: unknown; text?: unknown; image_url?: unknown }>) {
          if ((part?.type === 'input_text' || part?.type === 'output_text') && typeof part.text === 'string') parts.push({ type: 'text', text: part.text });
          else if (part?.type === 'input_image' && typeof part.image_url === 'string') parts.push({ type: 'image', image: imageFromUrl(part.image_url) });
          else untranslatable.add(`"${String(part?.type)}" content parts`);
        }
      }
      const content = compactContent(parts);
      messages.push({ role, content });
    }
  }
  if (body.tools !== undefined) untranslatable.add('tools');
  if (body.previous_response_id !== undefined) untranslatable.add('previous_response_id');
  return { messages, untranslatable: [...untranslatable] };
}

export function relayBody(body: ResponsesBody, upstreamModel: string, droppedNativeNames: readonly string[]): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel };
  for (const [field, native] of Object.entries(gatedFields)) if (droppedNativeNames.includes(native)) delete forwarded[field];
  return forwarded;
}

const wireUsage = (usage: TokenUsage | undefined) =>
  usage && {
    input_tokens: usage.inputTokens,
    input_tokens_details: { cached_tokens: 0 },
    output_tokens: usage.outputTokens,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: usage.inputTokens + usage.outputTokens,
  };

/** Builds Response objects and stream events for one translated answer. */
export class ResponseEncoder {
  private readonly id = `resp_${randomBytes(16).toString('hex')}`;
  private readonly messageId = `msg_${randomBytes(16).toString('hex')}`;
  private readonly createdAt = Math.floor(Date.now() / 1000);
  private sequence = 0;
  private started = false;
  private text = '';

  constructor(private readonly model: string) {}

  response(status: 'in_progress' | 'completed' | 'incomplete', finish?: Extract<ChatStreamEvent, { type: 'finish' }>): object {
    const done = status !== 'in_progress';
    return {
      id: this.id,
      object: 'response',
      created_at: this.createdAt,
      status,
      error: null,
      incomplete_details: status === 'incomplete' ? { reason: 'max_output_tokens' } : null,
      model: this.model,
      output: done ? [this.message('completed')] : [],
      usage: wireUsage(finish?.usage) ?? null,
    };
  }

  /** A whole Response from a collected answer. */
  whole({ text, finish }: CollectedAnswer): object {
    this.text = text;
    return this.response(statusOf(finish?.finishReason), finish);
  }

  /** The named stream events for one canonical event, in the protocol's order. */
  events(event: ChatStreamEvent): Array<[string, object]> {
    const out: Array<[string, object]> = [];
    const emit = (type: string, payload: object) => out.push([type, { type, sequence_number: this.sequence++, ...payload }]);
    const part = () => ({ type: 'output_text', text: this.text, annotations: [] });
    const at = { item_id: this.messageId, output_index: 0, content_index: 0 };
    if (!this.started) {
      this.started = true;
      emit('response.created', { response: this.response('in_progress') });
      emit('response.in_progress', { response: this.response('in_progress') });
      emit('response.output_item.added', { output_index: 0, item: { id: this.messageId, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      emit('response.content_part.added', { ...at, part: part() });
    }
    if (event.type === 'text-delta') {
      this.text += event.text;
      emit('response.output_text.delta', { ...at, delta: event.text, logprobs: [] });
      return out;
    }
    const status = statusOf(event.finishReason);
    emit('response.output_text.done', { ...at, text: this.text, logprobs: [] });
    emit('response.content_part.done', { ...at, part: part() });
    emit('response.output_item.done', { output_index: 0, item: this.message('completed') });
    emit(status === 'completed' ? 'response.completed' : 'response.incomplete', { response: this.response(status, event) });
    return out;
  }

  private message(status: string): object {
    return { id: this.messageId, type: 'message', status, role: 'assistant', content: [{ type: 'output_text', text: this.text, annotations: [] }] };
  }
}

function statusOf(reason: FinishReason | undefined): 'completed' | 'incomplete' {
  return reason?.unified === 'length' ? 'incomplete' : 'completed';
}
