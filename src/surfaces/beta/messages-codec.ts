import type { Static } from 'typebox';
import type { RelayTerms, Untranslatable } from '../../gateway/text-generation.ts';
import { randomBytes } from 'node:crypto';
import {
  argumentsObject,
  compactContent,
  heldFormat,
  leftOut,
  nameToolResults,
  newInputNotes,
  contentInParts,
  toolResultText,
  toolDefinition,
  unnamedFormat,
  userTurn,
  type ChatMessage,
  type ChatPart,
  type ChatStreamEvent,
  type DecodedChat,
  type FinishReason,
  type InputNotes,
  type ResponseFormat,
  type ThinkingConfig,
  type ToolChoice,
  type ToolDefinition,
} from '../../domain/chat.ts';
import { clientFieldNames, nativeParameters } from '../../catalog/capability-gate.ts';
import { requireNestingWithin, requireToolTextsWithin } from '../../domain/nesting.ts';
import type { CollectedAnswer } from '../../gateway/collected-answer.ts';
import {
  isClientTool,
  isKnownContentBlock,
  isKnownImageSource,
  isKnownOutputFormat,
  isKnownThinkingConfig,
  stopReasonOf,
  wireUsage,
  type ContentBlock,
  type ImageBlock,
  type Message,
  type MessagesStreamEvent,
  type StartedBlock,
  type MessagesRequest,
  type OutputFormat,
  type ThinkingConfig as WireThinkingConfig,
  type Tool,
  type ToolChoice as WireToolChoice,
} from '../../protocols/anthropic/messages.ts';

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
): { field: string; format: OutputFormat } | undefined {
  const format = body.output_config?.format;
  if (format) return { field: 'output_config.format', format };
  return body.output_format ? { field: 'output_format', format: body.output_format } : undefined;
}

/** output_config field -> native parameter name: the answer's format (which wins over `output_format`) and effort. */
const outputConfigFields: Readonly<Record<string, string>> = { format: 'responseFormat', effort: 'reasoningEffort' };

/** The gated parameters of a messages request, by native name: its top-level fields and those of output_config. */
export function gatedParametersOf(body: MessagesRequest): Record<string, unknown> {
  return {
    ...nativeParameters(body, gatedFields),
    ...nativeParameters(body.output_config, outputConfigFields),
  };
}

/**
 * Parameters the request carries inside a field already gated (`tool_choice`): not gated again, as the
 * protocol's own models take them, but named when a translated call has no place for them.
 */
export function ungatedParametersOf(body: MessagesRequest): Record<string, unknown> {
  return parallelToolCallsOf(body.tool_choice) === false ? { parallelToolCalls: false } : {};
}

/** `tool_choice.disable_parallel_tool_use: true` is the other protocols' parallel tool calls switched off. */
function parallelToolCallsOf(choice: WireToolChoice | undefined): false | undefined {
  return choice && 'disable_parallel_tool_use' in choice && choice.disable_parallel_tool_use === true
    ? false
    : undefined;
}

/**
 * The field each parameter came in, for refusals and dropped parameters: the parallel calls switched off on the
 * tool choice, and the schema's strictness (which the protocol holds every schema to) by its format's field.
 */
export function fieldNamesOfBody(body: MessagesRequest): Record<string, string> {
  const format = outputFormatOf(body);
  return {
    ...clientFieldNames(body, gatedFields),
    ...clientFieldNames(body.output_config, outputConfigFields, 'output_config.'),
    ...(parallelToolCallsOf(body.tool_choice) === false
      ? { parallelToolCalls: 'tool_choice.disable_parallel_tool_use' }
      : {}),
    ...(format ? { structuredOutputs: format.field } : {}),
    strictTools: 'tools.strict',
  };
}

/** A JSON answer matching a schema, the one format the protocol has; another is the request's to relay only. */
function decodeOutputFormat(
  body: Pick<MessagesRequest, 'output_config' | 'output_format'>,
  untranslatable: Set<string>,
): ResponseFormat | undefined {
  const output = outputFormatOf(body);
  if (!output) return undefined;
  if (isKnownOutputFormat(output.format)) {
    requireNestingWithin(output.format.schema, `body.${output.field}.schema`);
    return { type: 'json_schema', name: unnamedFormat, schema: output.format.schema };
  }
  untranslatable.add(`this ${output.field}`);
  return undefined;
}

/**
 * Blocks the other protocols have no place for but lose nothing by leaving: the model's own earlier reasoning,
 * which no other protocol takes from another model (as Responses' reasoning items). Left out, and named;
 * relayed, the model may read them again (Claude's newer models keep earlier thinking, billed as input).
 */
const droppedBlocks = new Set(['thinking', 'redacted_thinking']);

/** The kinds of reasoning block the conversation sends back, named as a translated call goes without them. */
function reasoningBlocks(messages: MessagesRequest['messages']): string[] {
  const sent = new Set<string>();
  for (const message of messages)
    if (typeof message.content !== 'string')
      for (const block of message.content) if (droppedBlocks.has(block.type)) sent.add(block.type);
  return [...droppedBlocks].filter((type) => sent.has(type)).map((type) => `messages.content.${type}`);
}

/** An image block's picture, where its source is one the other protocols take (data or a URL). */
function imagePart(block: Static<typeof ImageBlock>): ChatPart | undefined {
  const source = block.source;
  if (!isKnownImageSource(source)) return undefined;
  switch (source.type) {
    case 'base64':
      return { type: 'image', image: { kind: 'base64', mediaType: source.media_type, data: source.data } };
    case 'url':
      return { type: 'image', image: { kind: 'url', url: source.url } };
    default:
      return undefined;
  }
}

/** The canonical part of a known block; undefined where the block has no canonical part (a document, a file image). */
function blockPart(block: ContentBlock, notes: InputNotes): ChatPart | undefined {
  if (!isKnownContentBlock(block)) return undefined;
  switch (block.type) {
    case 'text':
      return { type: 'text', text: block.text };
    case 'image':
      return imagePart(block);
    case 'tool_use':
      return {
        type: 'tool-call',
        call: { id: block.id, name: block.name, arguments: JSON.stringify(block.input ?? {}) },
      };
    case 'tool_result': {
      const parts = blockParts(block.content, notes);
      // A tool result is text in the other protocols and to the bound: a picture in it has no place there.
      if (parts.some((part) => part.type === 'image')) leftOut(notes, 'images in tool_result blocks');
      const output = toolResultText(parts);
      return {
        type: 'tool-result',
        result: { callId: block.tool_use_id, name: '', output, ...(block.is_error === true ? { isError: true } : {}) },
      };
    }
    default:
      return undefined;
  }
}

/** The canonical parts of blocks; a block without one (a document, thinking...) is input the bound leaves out. */
function blockParts(content: string | readonly ContentBlock[] | undefined, notes: InputNotes): ChatPart[] {
  if (content === undefined) return [];
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  const parts: ChatPart[] = [];
  for (const block of content) {
    const part = blockPart(block, notes);
    if (part) parts.push(part);
    else if (droppedBlocks.has(block.type)) notes.uncounted = true;
    else leftOut(notes, `"${block.type}" content blocks`);
  }
  return parts;
}

function decodeTools(tools: readonly Tool[] | undefined, untranslatable: Set<string>): ToolDefinition[] | undefined {
  if (tools === undefined) return undefined;
  const definitions: ToolDefinition[] = [];
  for (const [index, tool] of tools.entries()) {
    // Client tools have no type (or `custom`); typed ones are the provider's own server tools.
    if (!isClientTool(tool)) {
      untranslatable.add(`"${tool.type}" tools`);
      continue;
    }
    requireNestingWithin(tool.input_schema, `body.tools.${index}.input_schema`);
    const { name, description, input_schema: parameters, strict } = tool;
    definitions.push(toolDefinition({ name, description, parameters, strict }));
  }
  return definitions;
}

function decodeToolChoice(choice: WireToolChoice | undefined): ToolChoice | undefined {
  if (choice === undefined) return undefined;
  switch (choice.type) {
    case 'any':
      return 'required';
    case 'tool':
      return { name: choice.name };
    default:
      return choice.type;
  }
}

/** `{type: 'enabled', budget_tokens}` or `{type: 'disabled'}`; another kind is left for the gate to name. */
function decodeThinking(thinking: WireThinkingConfig | undefined): ThinkingConfig | undefined {
  if (thinking === undefined || !isKnownThinkingConfig(thinking)) return undefined;
  return thinking.type === 'disabled'
    ? { type: 'disabled' }
    : { type: 'enabled', budgetTokens: thinking.budget_tokens };
}

/** Whether a block or tool marks a prompt-cache breakpoint (`cache_control`). */
function marksCache(item: object): boolean {
  return Object.hasOwn(item, 'cache_control');
}

/** Whether the blocks, or the blocks of a tool result among them, mark a prompt-cache breakpoint. */
function blocksMarkCache(content: string | readonly ContentBlock[] | undefined): boolean {
  if (content === undefined || typeof content === 'string') return false;
  return content.some(
    (block) =>
      marksCache(block) ||
      (isKnownContentBlock(block) && block.type === 'tool_result' && blocksMarkCache(block.content)),
  );
}

/**
 * Prompt-cache breakpoints: the other protocols cache without them (OpenAI and Gemini on their own), so a
 * translated call goes without them, named.
 */
function cacheBreakpoints(body: Omit<MessagesRequest, 'max_tokens'>): string[] {
  const marked =
    blocksMarkCache(body.system) ||
    body.messages.some((message) => blocksMarkCache(message.content)) ||
    (body.tools ?? []).some(marksCache);
  return marked ? ['cache_control'] : [];
}

/** The field of each tool_result block answering one of `callIds`, as the client wrote it. */
function toolResultFields(messages: MessagesRequest['messages'], callIds: ReadonlySet<string>): string[] {
  if (callIds.size === 0) return [];
  const fields: string[] = [];
  for (const [index, message] of messages.entries()) {
    if (typeof message.content === 'string') continue;
    for (const [position, block] of message.content.entries())
      if (isKnownContentBlock(block) && block.type === 'tool_result' && callIds.has(block.tool_use_id))
        fields.push(`body.messages[${index}].content[${position}].tool_use_id`);
  }
  return fields;
}

/**
 * A message thread (`thread`) has the server hold the conversation, so that a `continue` sends only the new turn.
 * The gateway holds none: only a row of this protocol takes one (relayed as given), and a translated call refuses
 * it with the code on which Anthropic's SDK sends the turn again without a thread, with the whole conversation.
 * First among what only a relay carries, so that the SDK recovers from it before any other refusal.
 */
export function threadOf(body: MessagesRequest): Untranslatable[] {
  if (body.thread === undefined) return [];
  return [
    {
      feature: 'message threads (`thread`: send the whole conversation without it)',
      sdkDetails: { error_code: 'thread_unsupported_request', unsupported: ['thread'] },
    },
  ];
}

/** A messages request, or the prompt of one (count_tokens). */
export function decodeMessages(body: Omit<MessagesRequest, 'max_tokens'>): DecodedChat {
  const notes = newInputNotes();
  const { untranslatable } = notes;
  const messages: ChatMessage[] = [];
  // Blocks nest (tool results hold blocks, tool calls hold their arguments), and are walked and serialised by recursion.
  requireNestingWithin(body.system, 'body.system');
  // Text blocks stay blocks, so that a protocol taking a system prompt in parts gets them as the client wrote them.
  if (body.system !== undefined)
    messages.push({ role: 'system', content: contentInParts(blockParts(body.system, notes)) });
  for (const [index, message] of body.messages.entries()) {
    if (message.role !== 'user' && message.role !== 'assistant') untranslatable.add(`"${message.role}" messages`);
    requireNestingWithin(message.content, `body.messages.${index}.content`);
    const parts = blockParts(message.content, notes);
    requireToolTextsWithin(parts, `body.messages.${index}`);
    if (message.role === 'assistant') {
      messages.push({ role: 'assistant', content: compactContent(parts) });
      continue;
    }
    messages.push(...userTurn(parts));
  }
  const tools = decodeTools(body.tools, untranslatable);
  const toolChoice = decodeToolChoice(body.tool_choice);
  const parallelToolCalls = parallelToolCallsOf(body.tool_choice);
  const named = nameToolResults(messages);
  return {
    messages: named.messages,
    unmatchedToolResults: toolResultFields(body.messages, named.unmatched),
    ...(tools ? { tools } : {}),
    ...(toolChoice ? { toolChoice } : {}),
    ...(parallelToolCalls === false ? { parallelToolCalls } : {}),
    topK: body.top_k,
    thinking: decodeThinking(body.thinking),
    ...heldFormat(decodeOutputFormat(body, untranslatable)),
    reasoningEffort: body.output_config?.effort,
    untranslatable: [...untranslatable],
    uncountedInput: notes.uncounted,
    notTranslated: [...cacheBreakpoints(body), ...reasoningBlocks(body.messages)],
  };
}

export function relayBody(
  body: MessagesRequest,
  { upstreamModel, droppedNativeNames, maxOutputTokens }: RelayTerms,
): Record<string, unknown> {
  const forwarded: Record<string, unknown> = { ...body, model: upstreamModel, max_tokens: maxOutputTokens };
  for (const [field, native] of Object.entries(gatedFields))
    if (droppedNativeNames.includes(native) && field !== 'max_tokens') delete forwarded[field];
  // A dropped setting leaves output_config, whose other settings stay.
  const config = body.output_config;
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
export function messageOf(model: string, { text, toolCalls, finish }: CollectedAnswer): Message {
  const calls = toolCalls.map((call) => ({
    type: 'tool_use' as const,
    id: call.id,
    name: call.name,
    input: argumentsObject(call.arguments),
  }));
  return {
    id: `msg_${randomBytes(12).toString('hex')}`,
    type: 'message',
    role: 'assistant',
    model,
    content: [...(text !== '' || calls.length === 0 ? [{ type: 'text' as const, text }] : []), ...calls],
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

  encode(event: ChatStreamEvent): Array<[string, MessagesStreamEvent]> {
    const out: Array<[string, MessagesStreamEvent]> = [];
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

  private open(out: Array<[string, MessagesStreamEvent]>, kind: 'text' | 'tool', contentBlock: StartedBlock): number {
    this.close(out);
    const index = this.blocks++;
    this.openBlock = { index, kind };
    out.push(['content_block_start', { type: 'content_block_start', index, content_block: contentBlock }]);
    return index;
  }

  private close(out: Array<[string, MessagesStreamEvent]>): void {
    if (this.openBlock) out.push(['content_block_stop', { type: 'content_block_stop', index: this.openBlock.index }]);
    this.openBlock = undefined;
  }
}
