/** Requests waiting in this process for media jobs to end, woken by the `job-finished` storage event. */
export class JobWaiters {
  private readonly waiting = new Map<string, Set<() => void>>();

  /** Resolves when the job is announced finished, after `ms`, or on `signal`, whichever is first. */
  wait(jobId: string, ms: number, signal?: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', done);
        const set = this.waiting.get(jobId);
        set?.delete(done);
        if (set?.size === 0) this.waiting.delete(jobId);
        resolve();
      };
      const timer = setTimeout(done, ms);
      signal?.addEventListener('abort', done, { once: true });
      let set = this.waiting.get(jobId);
      if (!set) {
        set = new Set();
        this.waiting.set(jobId, set);
      }
      set.add(done);
    });
  }

  finished(jobId: string): void {
    for (const wake of [...(this.waiting.get(jobId) ?? [])]) wake();
  }
}
