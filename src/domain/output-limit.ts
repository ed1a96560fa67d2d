/** Most text kept uncounted, whatever the limit: under a very large limit, a long answer is counted as it goes. */
const maxUncountedBytes = 64 * 1024;

/**
 * The output limit a hold covers, enforced as an answer is delivered: output passes while what was delivered
 * before it is under the limit, so an answer ends at most one event past it (the event that reached it is
 * delivered whole). What was delivered is the upstream's running usage where its stream reports one, or the
 * gateway's count of the delivered text, whichever is higher: an upstream cannot stream on by reporting less
 * than it sends.
 *
 * Counting stays linear and mostly free: no tokenizer counts more tokens than a text has UTF-8 bytes, so text
 * is only kept (64 KiB at most) and counted, in one piece, when the limit is asked about while what was counted
 * plus its bytes could reach it. Each piece of text is counted once; near the limit, in small batches. An
 * answer that ends without more output after nearing its limit is never counted here (an upstream's usage, or
 * the settlement's own count, says what it cost).
 */
export class OutputLimit {
  private counted = 0;
  private reported = 0;
  /** Text delivered and not yet counted, which cannot take the count to the limit. */
  private uncounted: string[] = [];
  private uncountedBytes = 0;

  /** `countTokens` counts the tokens of a piece of text (the gateway's estimate). */
  constructor(
    readonly maxTokens: number,
    private readonly countTokens: (text: string) => number,
  ) {}

  /** The output tokens the upstream says it has made so far. */
  report(outputTokens: number): void {
    if (outputTokens > this.reported) this.reported = outputTokens;
  }

  /** Adds output about to be delivered: `text`, and `charactersBeyond` more, each counted as a token. */
  add(text: string, charactersBeyond = 0): void {
    this.counted += charactersBeyond;
    if (text !== '') {
      this.uncounted.push(text);
      this.uncountedBytes += Buffer.byteLength(text);
    }
    if (this.uncountedBytes >= maxUncountedBytes) this.count();
  }

  private count(): void {
    if (this.uncounted.length > 0) this.counted += this.countTokens(this.uncounted.join(''));
    this.uncounted = [];
    this.uncountedBytes = 0;
  }

  /** The output delivered so far, in tokens; text not yet counted cannot reach the limit, and is not in it. */
  get delivered(): number {
    if (this.mayBeReached) this.count();
    return Math.max(this.counted, this.reported);
  }

  /** The limit may be reached, by what is known without counting: false means it is not. */
  get mayBeReached(): boolean {
    return this.counted + this.uncountedBytes >= this.maxTokens || this.reported >= this.maxTokens;
  }

  /** The limit is reached: no further output may be delivered. */
  get reached(): boolean {
    return this.delivered >= this.maxTokens;
  }
}
