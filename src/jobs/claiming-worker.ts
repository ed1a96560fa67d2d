/**
 * A durable queue's worker in one process (media jobs, webhook deliveries): `claim` runs when woken and on a
 * poll timer, never twice at once (a wake during a claim runs it once more after), until stopped; `stop`
 * then waits a grace period for the work under way.
 */
export abstract class ClaimingWorker {
  private timer: NodeJS.Timeout | undefined;
  private claiming: Promise<void> | undefined;
  private again = false;
  private stopped = true;

  constructor(private readonly loop: { pollMs: number; concurrency: number; onError: (error: unknown) => void }) {}

  /** Claims due work and launches it. */
  protected abstract claim(): Promise<void>;

  /** The work under way, waited for by `stop`. */
  protected abstract underWay(): Iterable<Promise<unknown>>;

  /** Starts claiming (never with a concurrency of 0). */
  start(): void {
    if (this.loop.concurrency === 0) return;
    this.stopped = false;
    this.timer = setInterval(() => this.wake(), this.loop.pollMs);
    this.timer.unref();
    this.wake();
  }

  /** Claims now (or once more after the claim under way). */
  wake(): void {
    if (this.stopped) return;
    if (this.claiming) {
      this.again = true;
      return;
    }
    this.claiming = this.claim()
      .catch((error: unknown) => this.loop.onError(error))
      .finally(() => {
        this.claiming = undefined;
        if (this.again) {
          this.again = false;
          this.wake();
        }
      });
  }

  /** Stops claiming and waits up to `graceMs` for the work under way; the rest is let go for another process. */
  async stop(graceMs: number): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    await this.claiming;
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(this.underWay()),
      new Promise((resolve) => (timer = setTimeout(resolve, graceMs))),
    ]);
    clearTimeout(timer);
  }

  /** Claiming: started and not stopped. */
  get isRunning(): boolean {
    return !this.stopped;
  }
}
