export interface AttemptCounterOptions {
  /** Attempts allowed per key within one window. */
  limit: number;
  windowMs: number;
  /** Keys remembered at most; past that the oldest window is forgotten first. */
  maxEntries: number;
  now?: () => number;
}

interface Window {
  count: number;
  endsAt: number;
}

/**
 * Counts attempts per key (an email, a client address) in fixed windows. Memory is bounded: a Map keeps
 * insertion order, which is the order windows opened, so evicting from its front forgets the oldest; an
 * attacker cycling through many addresses or emails only pushes out old entries.
 */
export class AttemptCounter {
  private readonly windows = new Map<string, Window>();
  private readonly now: () => number;

  constructor(private readonly options: AttemptCounterOptions) {
    this.now = options.now ?? Date.now;
  }

  /** Seconds until `key` may try again; 0 while it is under its limit. */
  retryAfterSeconds(key: string): number {
    const window = this.current(key);
    if (!window || window.count < this.options.limit) return 0;
    return Math.max(1, Math.ceil((window.endsAt - this.now()) / 1000));
  }

  record(key: string): void {
    let window = this.current(key);
    if (!window) {
      window = { count: 0, endsAt: this.now() + this.options.windowMs };
      this.windows.set(key, window);
      for (const oldest of this.windows.keys()) {
        if (this.windows.size <= this.options.maxEntries) break;
        this.windows.delete(oldest);
      }
    }
    window.count++;
  }

  /** Takes back one attempt recorded in the current window (one that turned out not to count). */
  unrecord(key: string): void {
    const window = this.current(key);
    if (window && window.count > 0) window.count--;
  }

  forget(key: string): void {
    this.windows.delete(key);
  }

  /** Keys remembered now. */
  get size(): number {
    return this.windows.size;
  }

  private current(key: string): Window | undefined {
    const window = this.windows.get(key);
    if (window && window.endsAt <= this.now()) {
      this.windows.delete(key);
      return undefined;
    }
    return window;
  }
}
