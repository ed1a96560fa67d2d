interface Pending<I, O> {
  input: I;
  resolve: (output: O) => void;
  reject: (error: unknown) => void;
}

/** How a batcher sends its statements, and what it does when a batch fails. */
export interface BatchPolicy {
  /** Largest batch one statement carries. */
  maxBatch: number;
  /** Statements running at once. */
  maxInFlight: number;
  /**
   * How long work that finds no statement running waits for company before it is sent (group commit, as
   * PostgreSQL's own `commit_delay`): at low load a few statements become one; under load one is always running,
   * what arrives meanwhile goes out when it returns, and nothing waits on this. Absent: sent at once. Only for
   * statements nobody waits on (a settlement is sent after its answer).
   */
  lingerMs?: number;
  /**
   * Whether the statements of a batch that failed with `error` may be sent again one by one. When the database
   * answered the error, the batch's transaction was rolled back; when the connection was lost, it may have
   * committed with its answer lost, and only a statement that finds its own earlier effect is safe to repeat.
   * Absent: every statement is one that is.
   */
  retriesAfter?: (error: unknown) => boolean;
}

/**
 * Group commit for one kind of statement: work is sent as it comes while fewer than `maxInFlight`
 * statements are running, and whatever arrives meanwhile goes out as one batch when one returns. At low load
 * nothing waits (unless the policy lingers); under load one round trip and one transaction serve many callers. A batch is one
 * transaction: when it fails, each of its statements is sent alone (where the policy allows it), and only the
 * ones that fail alone fail their callers.
 */
export class StatementBatcher<I, O> {
  private readonly queue: Array<Pending<I, O>> = [];
  private inFlight = 0;
  private lingering = false;

  constructor(
    private readonly one: (input: I) => Promise<O>,
    private readonly many: (inputs: I[]) => Promise<O[]>,
    private readonly limits: BatchPolicy,
  ) {}

  submit(input: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.queue.push({ input, resolve, reject });
      if (this.limits.lingerMs === undefined || this.inFlight > 0) this.pump();
      else this.lingerThenPump(this.limits.lingerMs);
    });
  }

  private lingerThenPump(lingerMs: number): void {
    if (this.lingering) return;
    this.lingering = true;
    setTimeout(() => {
      this.lingering = false;
      this.pump();
    }, lingerMs);
  }

  private pump(): void {
    while (this.inFlight < this.limits.maxInFlight && this.queue.length > 0) {
      const batch = this.queue.splice(0, this.limits.maxBatch);
      this.inFlight++;
      void this.run(batch).finally(() => {
        this.inFlight--;
        this.pump();
      });
    }
  }

  private async run(batch: Array<Pending<I, O>>): Promise<void> {
    if (batch.length > 1) {
      let outputs: O[];
      try {
        outputs = await this.many(batch.map((item) => item.input));
      } catch (error) {
        if (this.limits.retriesAfter?.(error) === false) {
          for (const item of batch) item.reject(error);
          return;
        }
        // One statement's failure rolled the whole batch back: each is tried alone.
        await Promise.all(batch.map((item) => this.one(item.input).then(item.resolve, item.reject)));
        return;
      }
      const error =
        outputs.length === batch.length
          ? undefined
          : new Error(`a batch of ${batch.length} statements answered ${outputs.length} results`);
      for (const [index, item] of batch.entries()) {
        if (error) item.reject(error);
        else item.resolve(outputs[index]!);
      }
      return;
    }
    await this.one(batch[0]!.input).then(batch[0]!.resolve, batch[0]!.reject);
  }
}
