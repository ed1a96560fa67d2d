import { once } from '../domain/once.ts';

/**
 * Counts generations still settling, so a shutdown can wait for their holds to settle before it closes
 * storage (a hijacked streaming response is invisible to the HTTP server's own drain).
 */
export class WorkTracker {
  private active = 0;
  private waiters: Array<() => void> = [];

  begin(): () => void {
    this.active++;
    return once(() => {
      this.active--;
      if (this.active === 0) for (const wake of this.waiters.splice(0)) wake();
    });
  }

  get size(): number {
    return this.active;
  }

  /** Resolves when nothing is in flight, or after `timeoutMs`, whichever comes first. */
  async idle(timeoutMs: number): Promise<void> {
    if (this.active === 0) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, timeoutMs);
      this.waiters.push(() => {
        clearTimeout(timer);
        resolve();
      });
    });
  }
}
