import { newId } from '../../domain/ids.ts';
import type { ToolCallFragment } from '../../protocols/openai/chat-completions.ts';

/** The call a fragment belongs to, by its canonical index, and the call's id and name when the fragment opens it. */
export interface FollowedFragment {
  index: number;
  opened?: { id: string; name: string };
}

/**
 * The tool calls one choice of a chat-completions stream has opened, numbered in the order they opened.
 * A fragment whose `index` has an open call continues it, whatever else it carries: compatible servers repeat the
 * call's id, type and name on every fragment (LiteLLM's proxy, Fireworks, DeepSeek, Qwen) or send them empty
 * (LiteLLM), and none of that is a new call. A fragment without `index` (Google's compatible endpoint, which sends
 * each call whole) continues the last call, unless it carries a non-empty id other than that call's: then it opens
 * a new one.
 */
export class StreamedCalls {
  private readonly byIndex = new Map<number, number>();
  private last: { index: number; id: string } | undefined;
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
    if (index !== undefined) return this.byIndex.get(index);
    return !id || id === this.last?.id ? this.last?.index : undefined;
  }

  private open(fragment: ToolCallFragment): FollowedFragment {
    const index = this.opened++;
    const id = fragment.id || newId('call');
    if (fragment.index !== undefined) this.byIndex.set(fragment.index, index);
    this.last = { index, id };
    return { index, opened: { id, name: fragment.function?.name ?? '' } };
  }
}
