import type { TokenUsage } from './chat.ts';
import { countTextTokens } from './tokenizer.ts';

/** Characters of delivered text kept for counting; a completion of this size is far past any catalog output limit. */
const keptCharacters = 1024 * 1024;

/** A point in a delivered output. */
export interface OutputMark {
  readonly pieces: number;
  readonly kept: number;
  readonly beyond: number;
}

/**
 * The text and tool-call arguments an answer delivered, for counting its output tokens when the upstream
 * reports none or is cut mid-way. Memory stays bounded whatever an upstream sends: past `keptCharacters`
 * only the number of characters is kept, each counted as a token at most (the reservation caps the charge).
 */
export class DeliveredOutput {
  private readonly pieces: string[] = [];
  private kept = 0;
  private beyond = 0;

  add(text: string): void {
    const room = keptCharacters - this.kept;
    if (text.length <= room) {
      this.pieces.push(text);
      this.kept += text.length;
      return;
    }
    if (room > 0) this.pieces.push(text.slice(0, room));
    this.kept = keptCharacters;
    this.beyond += text.length - Math.max(room, 0);
  }

  /** The point reached so far, to read or take back what is added after it. */
  mark(): OutputMark {
    return { pieces: this.pieces.length, kept: this.kept, beyond: this.beyond };
  }

  /** What was added since `mark`: the text kept, and the number of characters past what is kept. */
  since(mark: OutputMark): { text: string; charactersBeyond: number } {
    const added = this.pieces.length - mark.pieces;
    const text = added === 0 ? '' : added === 1 ? this.pieces[mark.pieces]! : this.pieces.slice(mark.pieces).join('');
    return { text, charactersBeyond: this.beyond - mark.beyond };
  }

  /** Takes back what was added since `mark` (output read but never delivered). */
  rewind(mark: OutputMark): void {
    this.pieces.length = mark.pieces;
    this.kept = mark.kept;
    this.beyond = mark.beyond;
  }

  get text(): string {
    return this.pieces.join('');
  }

  /** Characters delivered past what is kept. */
  get charactersBeyond(): number {
    return this.beyond;
  }
}

/** Tokens of delivered output: the text kept, counted, and each character past it as a token at most. */
export function countDeliveredTokens(output: DeliveredOutput): number {
  return countTextTokens(output.text) + output.charactersBeyond;
}

/**
 * The usage of a relayed answer billed on the gateway's count (one without usage, or cut mid-way by the upstream
 * or the output limit): the upstream's prompt count, else the gateway's (`promptTokens`), and the output
 * delivered as counted, at least what the upstream reported so far (a stream's running usage may lag its events).
 */
export function countedUsage(
  reported: TokenUsage | undefined,
  output: DeliveredOutput,
  promptTokens: () => number,
): TokenUsage {
  return {
    inputTokens: reported?.inputTokens || promptTokens(),
    outputTokens: Math.max(reported?.outputTokens ?? 0, countDeliveredTokens(output)),
  };
}
