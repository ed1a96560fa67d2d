import type { ChatStreamEvent } from '../../domain/chat.ts';
import { newId } from '../../domain/ids.ts';
import type { ToolCallFragment } from '../../protocols/openai/chat-completions.ts';

/** What a choice's fragments say of its calls, as canonical events (the decoder adds the choice's number). */
export type CallEvent = Extract<ChatStreamEvent, { type: 'tool-call-start' | 'tool-call-delta' }>;

/**
 * The tool calls one choice of a chat-completions stream has opened, numbered in the order they opened. A
 * fragment continues the open call of its `index` (or, without one, the last call) unless it carries a non-empty
 * id other than that call's: compatible servers repeat the call's id, type and name on every fragment (LiteLLM's
 * proxy, Fireworks, DeepSeek, Qwen) or send them empty or null (LiteLLM, vLLM), none of which is a new call; but
 * some send every parallel call under index 0 with an id of its own (Ollama, SGLang), and some send each call
 * whole without an index (Google's compatible endpoint): a new id is a new call.
 *
 * A call starts (`tool-call-start`, its id and name) once its name is known: the protocol lets a server open a
 * call by its id and name it in a later fragment, and a surface names a call as it starts it (Anthropic's
 * `content_block_start`, a Responses `output_item.added`), never after. Only the start waits, and not for long: a
 * call still unnamed starts without a name at its first argument text (arguments are passed on as they come, not
 * held for a name that may never come), or once the choice goes on to other output or ends (`release`).
 */
export class StreamedCalls {
  private readonly byIndex = new Map<number, OpenCall>();
  private last: OpenCall | undefined;
  private opened = 0;
  /** The call opened without a name and not started yet: at most one, as any other output starts it. */
  private unnamed: OpenCall | undefined;

  /** Whether the choice has made a call. */
  get madeCalls(): boolean {
    return this.opened > 0;
  }

  /**
   * The events of `fragment`: none for one that neither continues a call nor opens one, else the start of a call
   * left waiting for a name when the fragment is another call's, then its call's start once it has a name or
   * argument text, and that text.
   */
  follow(fragment: ToolCallFragment): CallEvent[] {
    const call = this.openCallOf(fragment) ?? (opens(fragment) ? this.open(fragment) : undefined);
    if (call === undefined) return [];
    const events = call === this.unnamed ? [] : this.release();
    const name = fragment.function?.name;
    const text = fragment.function?.arguments;
    if (!call.started) {
      if (name || text) events.push(this.start(call, name ?? ''));
      else this.unnamed = call;
    }
    if (text) events.push({ type: 'tool-call-delta', index: call.index, arguments: text });
    return events;
  }

  /** Starts the call left waiting for a name, with none: the choice has gone on to other output, or ended. */
  release(): CallEvent[] {
    return this.unnamed ? [this.start(this.unnamed, '')] : [];
  }

  private openCallOf({ index, id }: ToolCallFragment): OpenCall | undefined {
    const call = index === undefined ? this.last : this.byIndex.get(index);
    return call && (!id || id === call.id) ? call : undefined;
  }

  private open(fragment: ToolCallFragment): OpenCall {
    const call = { index: this.opened++, id: fragment.id || newId('call'), started: false };
    if (fragment.index !== undefined) this.byIndex.set(fragment.index, call);
    this.last = call;
    return call;
  }

  private start(call: OpenCall, name: string): CallEvent {
    call.started = true;
    if (this.unnamed === call) this.unnamed = undefined;
    return { type: 'tool-call-start', index: call.index, id: call.id, name };
  }
}

/** A fragment opens a call when it says which: an id or a name (without either, it is arguments of no call). */
const opens = (fragment: ToolCallFragment) => fragment.id != null || fragment.function?.name != null;

/** A call opened: its canonical index, the id it goes by (the upstream's, or one of ours), and whether it started. */
interface OpenCall {
  index: number;
  id: string;
  started: boolean;
}
