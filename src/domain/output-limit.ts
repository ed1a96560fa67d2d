/**
 * The output limit a hold covers, enforced as an answer is delivered: output passes while what was delivered
 * before it is under the limit, so an answer ends at most one event past it (the event that reached it is
 * delivered whole). What was delivered is the upstream's running usage where its stream reports one, or the
 * gateway's count of the delivered text, whichever is higher: an upstream cannot stream on by reporting less
 * than it sends.
 *
 * Counting stays linear and mostly free: while the delivered text has fewer UTF-8 bytes than the limit has
 * tokens, no tokenizer can count it at the limit, so it is only kept; it is counted once, when its bytes reach
 * the limit, and each piece after that as it arrives.
 */
export class OutputLimit {
  private counted = 0;
  private reported = 0;
  /** The text delivered while its bytes stay under the limit, not yet counted; undefined once counted. */
  private uncounted: string[] | undefined = [];
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
    if (this.uncounted === undefined) {
      if (text !== '') this.counted += this.countTokens(text);
      return;
    }
    this.uncounted.push(text);
    this.uncountedBytes += Buffer.byteLength(text);
    if (this.uncountedBytes + this.counted < this.maxTokens) return;
    this.counted += this.countTokens(this.uncounted.join(''));
    this.uncounted = undefined;
  }

  /** The output delivered so far, in tokens; text not yet counted is under the limit, and not in it. */
  get delivered(): number {
    return Math.max(this.counted, this.reported);
  }

  /** The limit is reached: no further output may be delivered. */
  get reached(): boolean {
    return this.delivered >= this.maxTokens;
  }
}
