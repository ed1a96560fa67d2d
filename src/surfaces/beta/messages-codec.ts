import type { RelayTerms } from '../../gateway/text-generation.ts';
import { randomBytes } from 'node:crypto';
import {
  argumentsObject,
  compactContent,
  nameToolResults,
  textOf,
  toolDefinition,
  userTurn,
  type ChatMessage,
  type ChatPart,
  type ChatStreamEvent,
  type DecodedChat,
  type FinishReason,
  type ResponseFormat,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { clientFieldNames, nativeParameters } from '../../catalog/capability-gate.ts';
import { requireNestingWithin, requireToolTextsWithin } from '../../domain/nesting.ts';
import { objectOf, stringOf } from '../../domain/wire-values.ts';
import type { CollectedAnswer } from '../../gateway/text-generation.ts';
import { stopReasonOf, wireUsage, type MessagesRequest } from '../../protocols/anthropic/messages.ts';

/** The beta (messages) request as this surface reads it; unknown fields are kept and forwarded. */
export type MessagesBody = MessagesRequest & { [field: string]: unknown };

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
  output_format: 'responseFormat',
};

/** The answer format the request asks for, where the client wrote it: `output_config.format` or `output_format`. */
function outputFormatOf(
  body: Pick<MessagesRequest, 'output_config' | 'output_format'>,
): { field: string; format: Record<string, unknown> } | undefined {
  const format = objectOf(body.output_config?.format);
  if (format) return { field: 'output_config.format', format };
  const older = objectOf(body.output_format);
  return older ? { field: 'output_format', format: older } : undefined;
}

/** output_config field -> native parameter name: the answer's format (which wins over `output_format`) and effort. */
const outputConfigFields: Readonly<Record<string, string>> = { format: 'responseFormat', effort: 'reasoningEffort' };

/** The gated parameters of a messages request, by native name: its top-level fields and those of output_config. */
export function gatedParametersOf(body: MessagesBody): Record<string, unknown> {
  return {
    ...nativeParameters(body, gatedFields),
    ...nativeParameters(objectOf(body.output_config), outputConfigFields),
  };
}

/** The field each parameter came in, for refusals. */
export function fieldNamesOfBody(body: MessagesBody): Record<string, string> {
  return {
    ...clientFieldNames(body, gatedFields),
    ...clientFieldNames(objectOf(body.output_config), outputConfigFields, 'output_config.'),
  };
}

/** A JSON answer matching a schema, the one format the protocol has; another is the request's to relay only. */
function decodeOutputFormat(
  body: Pick<MessagesRequest, 'output_config' | 'output_format'>,
  untranslatable: Set<string>,
): ResponseFormat | undefined {
  const output = outputFormatOf(body);
  if (!output) return undefined;
  const schema = objectOf(output.format.schema);
  if (output.format.type === 'json_schema' && schema) {
    requireNestingWithin(schema, `body.${output.field}.schema`);
    return { type: 'json_schema', name: 'response', schema };
  }
  untranslatable.add(`this ${output.field}`);
  return undefined;
}

interface Block {
  type?: unknown;
  text?: unknown;
  source?: { type?: unknown; media_type?: unknown; data?: unknown; url?: unknown };
  id?: unknown;
  name?: unknown;
  input?: unknown;
  tool_use_id?: unknown;
  content?: unknown;
  is_error?: unknown;
}

/** Blocks the other protocols have no place for but lose nothing by leaving: the model's own earlier reasoning. */
const droppedBlocks = new Set(['thinking', 'redacted_thinking']);

function blockParts(content: unknown, untranslatable: Set<string>): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return [];
  const parts: ChatPart[] = [];
  for (const block of content as Block[]) {
    const source = block?.source;
    if (block?.type === 'text' && typeof block.text === 'string') parts.push({ type: 'text', text: block.text });
    else if (
      block?.type === 'image' &&
      source?.type === 'base64' &&
      typeof source.media_type === 'string' &&
      typeof source.data === 'string'
    ) {
      parts.push({ type: 'image', image: { kind: 'base64', mediaType: source.media_type, data: source.data } });
    } else if (block?.type === 'image' && source?.type === 'url' && typeof source.url === 'string') {
      parts.push({ type: 'image', image: { kind: 'url', url: source.url } });
    } else if (block?.type === 'tool_use' && typeof block.id === 'string' && typeof block.name === 'string') {
      parts.push({
        type: 'tool-call',
        call: { id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      });
    } else if (block?.type === 'tool_result' && typeof block.tool_use_id === 'string') {
      const output = textOf(compactContent(blockParts(block.content, untranslatable)));
      parts.push({
        type: 'tool-result',
        result: { callId: block.tool_use_id, name: '', output, ...(block.is_error === true ? { isError: true } : {}) },
      });
    } else if (!droppedBlocks.has(String(block?.type))) untranslatable.add(`"${String(block?.type)}" content blocks`);
  }
  return parts;
}

function decodeTools(tools: unknown, untranslatable: Set<string>): ToolDefinition[] | undefined {
  if (!Array.isArray(tools)) return undefined;
  const definitions: ToolDefinition[] = [];
  for (const [index, tool] of (
    tools as Array<{ type?: unknown; name?: unknown; description?: unknown; input_schema?: unknown }>
  ).entries()) {
    // Client tools have no type (or `custom`); typed ones are the provider's own server tools.
    if ((tool?.type !== undefined && tool.type !== 'custom') || typeof tool?.name !== 'string') {
      untranslatable.add(`"${String(tool?.type ?? tool?.name)}" tools`);
      continue;
    }
    requireNestingWithin(tool.input_schema, `body.tools.${index}.input_schema`);
    definitions.push(toolDefinition(tool.name, tool.description, tool.input_schema));
  }
  return definitions;
}

function decodeToolChoice(choice: unknown, untranslatable: Set<string>): ToolChoice | undefined {
  const wire = choice as { type?: unknown; name?: unknown } | undefined;
  if (wire === undefined) return undefined;
  if (wire?.type === 'auto' || wire?.type === 'none') return wire.type;
  if (wire?.type === 'any') return 'required';
  if (wire?.type === 'tool' && typeof wire.name === 'string') return { name: wire.name };
  untranslatable.add('this tool_choice');
  return undefined;
}

/** `{type: 'enabled', budget_tokens}` or `{type: 'disabled'}`; another shape is left for the gate to name. */
function decodeThinking(thinking: unknown): ThinkingConfig | undefined {
  const wire = thinking as { type?: unknown; budget_tokens?: unknown } | null | undefined;
  if (wire?.type === 'disabled') return { type: 'disabled' };
  return wire?.type === 'enabled' && typeof wire.budget_tokens === 'number'
    ? { type: 'enabled', budgetTokens: wire.budget_tokens }
    : undefined;
}

/** A messages request, or the prompt of one (count_tokens). */
export function decodeMessages(body: Omit<MessagesRequest, 'max_tokens'>): DecodedChat {
  const untranslatable = new Set<string>();
  const messages: ChatMessage[] = [];
  // Blocks nest (tool results hold blocks, tool calls hold their arguments), and are walked and serialised by recursion.
  requireNestingWithin(body.system, 'body.system');
  if (body.system !== undefined)
    messages.push({ role: 'system', content: textOf(blockParts(body.system, untranslatable)) });
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') untranslatable.add(`"${message.role}" messages`);
    requireNestingWithin(message.content, `body.messages.${index}.content`);
    const parts = blockParts(message.content, untranslatable);
    requireToolTextsWithin(parts, `body.messages.${index}`);
    if (message.role === 'assistant') {
      messages.push({ role: 'assistant', content: compactContent(parts) });
      continue;
    }
    messages.push(...userTurn(parts));
  }
  const tools = decodeTools(body.tools, untranslatable);
  const toolChoice = decodeToolChoice(body.tool_choice, untranslatable);
  return {
    messages: nameToolResults(messages),
    ...(tools ? { tools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    topK: body.top_k,
    thinking: decodeThinking(body.thinking),
    responseFormat: decodeOutputFormat(body, untranslatable),
    reasoningEffort: stringOf(objectOf(body.output_config)?.effort),
    untranslatable: [...untranslatable],
  };
}

export function relayBody(
  body: MessagesBody,
  { upstreamModel, droppedNativeNames, maxOutputTokens }: RelayTerms,
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel, max_tokens: maxOutputTokens };
  for (const [field, native] of Object.entries(gatedFields))
    if (droppedNativeNames.includes(native) && field !== 'max_tokens') delete forwarded[field];
  // A dropped setting leaves output_config, whose other settings stay.
  const config = objectOf(body.output_config);
  if (config) {
    const kept = Object.fromEntries(
      Object.entries(config).filter(([field]) => !droppedNativeNames.includes(outputConfigFields[field] ?? '')),
    );
    if (Object.keys(kept).length > 0) forwarded.output_config = kept;
    else delete forwarded.output_config;
  }
  return forwarded;
}

/** A whole Message from a collected answer: a text block, then a tool_use block per call. */
export function messageOf(model: string, { text, toolCalls, finish }: CollectedAnswer): object {
  const calls = toolCalls.map((call) => ({
    type: 'tool_use',
    id: call.id,
    name: call.name,
    input: argumentsObject(call.arguments),
  }));
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [...(text !== '' || calls.length === 0 ? [{ type: 'text', text }] : []), ...calls],
    stop_reason: finish ? stopReasonOf(finish.finishReason) : 'end_turn',
    stop_sequence: matchedStopSequence(finish?.finishReason),
    usage: wireUsage(finish?.usage),
  };
}

/** The stop sequence that ended the turn, which the protocol names beside `stop_reason: "stop_sequence"`. */
function matchedStopSequence(reason: FinishReason | undefined): string | null {
  return reason !== undefined && stopReasonOf(reason) === 'stop_sequence' ? (reason.stopSequence ?? null) : null;
}

/** Canonical events as the protocol's named stream events, in its order: one content block at a time. */
export class MessageEventEncoder {
  private started = false;
  private blocks = 0;
  private openBlock: { index: number; kind: 'text' | 'tool' } | undefined;
  /** The tool call number -> its content block index. */
  private readonly toolBlocks = new Map<number, number>();

  /** `inputTokens`: the prompt's tokens as the gateway counts them, which message_start reports before any usage is in. */
  constructor(
    private readonly model: string,
    private readonly inputTokens: number,
  ) {}

  encode(event: ChatStreamEvent): Array<[string, object]> {
    const out: Array<[string, object]> = [];
    if (!this.started) {
      this.started = true;
      out.push([
        'message_start',
        {
          type: 'message_start',
          message: {
            id: `msg_${randomBytes(12).toString('hex')}`,
            type: 'message',
            role: 'assistant',
            model: this.model,
            content: [],
            stop_reason: null,
            stop_sequence: null,
            usage: { input_tokens: this.inputTokens, output_tokens: 0 },
          },
        },
      ]);
    }
    switch (event.type) {
      case 'text-delta': {
        const index =
          this.openBlock?.kind === 'text' ? this.openBlock.index : this.open(out, 'text', { type: 'text', text: '' });
        out.push([
          'content_block_delta',
          { type: 'content_block_delta', index, delta: { type: 'text_delta', text: event.text } },
        ]);
        break;
      }
      case 'tool-call-start':
        this.toolBlocks.set(
          event.index,
          this.open(out, 'tool', { type: 'tool_use', id: event.id, name: event.name, input: {} }),
        );
        break;
      case 'tool-call-delta': {
        const index = this.toolBlocks.get(event.index);
        if (index !== undefined)
          out.push([
            'content_block_delta',
            { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: event.arguments } },
          ]);
        break;
      }
      case 'finish':
        // An empty answer is still one (empty) text block, as the protocol streams it.
        if (this.blocks === 0) this.open(out, 'text', { type: 'text', text: '' });
        this.close(out);
        out.push([
          'message_delta',
          {
            type: 'message_delta',
            delta: {
              stop_reason: stopReasonOf(event.finishReason),
              stop_sequence: matchedStopSequence(event.finishReason),
            },
            usage: wireUsage(event.usage),
          },
        ]);
        out.push(['message_stop', { type: 'message_stop' }]);
    }
    return out;
  }

  private open(out: Array<[string, object]>, kind: 'text' | 'tool', contentBlock: object): number {
    this.close(out);
    const index = this.blocks++;
    this.openBlock = { index, kind };
    out.push(['content_block_start', { type: 'content_block_start', index, content_block: contentBlock }]);
    return index;
  }

  private close(out: Array<[string, object]>): void {
    if (this.openBlock) out.push(['content_block_stop', { type: 'content_block_stop', index: this.openBlock.index }]);
    this.openBlock = undefined;
  }
}
