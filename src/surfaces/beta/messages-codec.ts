import { randomBytes } from 'node:crypto';
import { compactContent, textOf, type ChatMessage, type ChatPart, type ChatStreamEvent, type FinishReason, type TokenUsage } from '../../domain/chat.ts';
import type { CollectedAnswer } from '../../gateway/text-generation.ts';

/** The beta (messages) request as this surface reads it; unknown fields are kept and forwarded. */
export interface MessagesBody {
  model: string;
  max_tokens: number;
  messages: Array<{ role: string; content: unknown }>;
  system?: unknown;
  stream?: boolean;
  temperature?: number;
  top_p?: number;
  top_k?: number;
  stop_sequences?: string[];
  [field: string]: unknown;
}

/** Wire field -> native parameter name, for the capability gate. */
export const gatedFields: Readonly<Record<string, string>> = {
  max_tokens: 'maxTokens',
  temperature: 'temperature',
  top_p: 'topP',
  top_k: 'topK',
  stop_sequences: 'stop',
  tools: 'tools',
  tool_choice: 'toolChoice',
  thinking: 'thinking',
};

interface Block {
  type?: unknown;
  text?: unknown;
  source?: { type?: unknown; media_type?: unknown; data?: unknown; url?: unknown };
}

/** A string, or text and image blocks in order; other block types are reported as untranslatable. */
function contentOf(content: unknown, untranslatable: Set<string>): ChatMessage['content'] {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const parts: ChatPart[] = [];
  for (const block of content as Block[]) {
    const source = block?.source;
    if (block?.type === 'text' && typeof block.text === 'string') parts.push({ type: 'text', text: block.text });
    else if (block?.type === 'image' && source?.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') {
      parts.push({ type: 'image', image: { kind: 'base64', mediaType: source.media_type, data: source.data } });
    } else if (block?.type === 'image' && source?.type === 'url' && typeof source.url === 'string') {
      parts.push({ type: 'image', image: { kind: 'url', url: source.url } });
    } else untranslatable.add(`"${String(block?.type)}" content blocks`);
  }
  return compactContent(parts);
}

export function decodeMessages(body: MessagesBody): { messages: ChatMessage[]; untranslatable: string[] } {
  const untranslatable = new Set<string>();
  const messages: ChatMessage[] = [];
  if (body.system !== undefined) messages.push({ role: 'system', content: textOf(contentOf(body.system, untranslatable)) });
  for (const message of body.messages) {
    const role = message.role === 'assistant' ? 'assistant' : 'user';
    if (message.role !== 'user' && message.role !== 'assistant') untranslatable.add(`"${message.role}" messages`);
    messages.push({ role, content: contentOf(message.content, untranslatable) });
  }
  if (body.tools !== undefined) untranslatable.add('tools');
  return { messages, untranslatable: [...untranslatable] };
}

export function relayBody(body: MessagesBody, upstreamModel: string, droppedNativeNames: readonly string[]): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel };
  for (const [field, native] of Object.entries(gatedFields)) if (droppedNativeNames.includes(native) && field !== 'max_tokens') delete forwarded[field];
  return forwarded;
}

function stopReasonOf(reason: FinishReason): string {
  if (reason.raw === 'stop_sequence') return 'stop_sequence';
  switch (reason.unified) {
    case 'length':
      return 'max_tokens';
    case 'tool-calls':
      return 'tool_use';
    case 'content-filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

const wireUsage = (usage: TokenUsage | undefined) => ({ input_tokens: usage?.inputTokens ?? 0, output_tokens: usage?.outputTokens ?? 0 });

/** A whole Message from a collected answer. */
export function messageOf(model: string, { text, finish }: CollectedAnswer): object {
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [{ type: 'text', text }],
    stop_reason: finish ? stopReasonOf(finish.finishReason) : 'end_turn',
    stop_sequence: null,
    usage: wireUsage(finish?.usage),
  };
}

/** Canonical events as the protocol's named stream events, in its order. */
export class MessageEventEncoder {
  private started = false;

  constructor(private readonly model: string) {}

  encode(event: ChatStreamEvent): Array<[string, object]> {
    const out: Array<[string, object]> = [];
    if (!this.started) {
      this.started = true;
      out.push(['message_start', { type: 'message_start', message: { id: `msg_${randomBytes(12).toString('hex')}`, type: 'message', role: 'assistant', model: this.model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 0, output_tokens: 0 } } }]);
      out.push(['content_block_start', { type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }]);
    }
    if (event.type === 'text-delta') {
      out.push(['content_block_delta', { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: event.text } }]);
    } else {
      out.push(['content_block_stop', { type: 'content_block_stop', index: 0 }]);
      out.push(['message_delta', { type: 'message_delta', delta: { stop_reason: stopReasonOf(event.finishReason), stop_sequence: null }, usage: wireUsage(event.usage) }]);
      out.push(['message_stop', { type: 'message_stop' }]);
    }
    return out;
  }
}
