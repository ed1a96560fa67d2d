import { newId } from '../../domain/ids.ts';
import type { ToolCallFragment } from '../../protocols/openai/chat-completions.ts';

/** The call a fragment belongs to, by its canonical index, and the call's id and name when the fragment opens it. */
export interface FollowedFragment {
  index: number;
  opened?: { id: string; name: string };
}

/**
 * The tool calls one choice of a chat-completions stream has opened, numbered in the order they opened. A
 * fragment continues the open call of its `index` (or, without one, the last call) unless it carries a non-empty
 * id other than that call's: compatible servers repeat the call's id, type and name on every fragment (LiteLLM's
 * proxy, Fireworks, DeepSeek, Qwen) or send them empty or null (LiteLLM, vLLM), none of which is a new call; but
 * some send every parallel call under index 0 with an id of its own (Ollama, SGLang), and some send each call
 * whole without an index (Google's compatible endpoint): a new id is a new call.
 */
export class StreamedCalls {
  private readonly byIndex = new Map<number, OpenCall>();
  private last: OpenCall | undefined;
  private opened = 0;

  /** Whether the choice has made a call. */
  get madeCalls(): boolean {
    return this.opened > 0;
  }

  /** The call `fragment` belongs to; none for a fragment that neither continues a call nor names one it opens. */
  follow(fragment: ToolCallFragment): FollowedFragment | undefined {
    const open = this.openCallOf(fragment);
    if (open !== undefined) return { index: open };
    const opens = fragment.id != null || fragment.function?.name != null;
    return opens ? this.open(fragment) : undefined;
  }

  private openCallOf({ index, id }: ToolCallFragment): number | undefined {
    const call = index === undefined ? this.last : this.byIndex.get(index);
    return call && (!id || id === call.id) ? call.index : undefined;
  }

  private open(fragment: ToolCallFragment): FollowedFragment {
    const call = { index: this.opened++, id: fragment.id || newId('call') };
    if (fragment.index !== undefined) this.byIndex.set(fragment.index, call);
    this.last = call;
    return { index: call.index, opened: { id: call.id, name: fragment.function?.name ?? '' } };
  }
}

/** A call opened: its canonical index, and the id it goes by (the upstream's, or one of ours). */
interface OpenCall {
  index: number;
  id: string;
}
