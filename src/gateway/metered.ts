export interface MeterOutcome {
  /** The source threw (a cut stream, an upstream error mid-way). */
  failed: boolean;
  /** The consumer stopped early (the client went away); the source was still read to its end. */
  consumerLeft: boolean;
}

export interface MeterHooks<T> {
  observe(item: T): void;
  /** Runs exactly once, after the source has been read to its end or failed; settles without waiting. */
  settle(outcome: MeterOutcome): void;
}

/**
 * Passes the source through while observing every item, and settles once at the very end. When the consumer
 * stops early, the rest of the source is still read (and observed), so a client that went away is billed
 * like one that stayed. The settlement is not awaited: the answer ends as soon as its last item is through,
 * while the hold (which covers the whole cost) stays in place until the settlement replaces it.
 */
export async function* metered<T>(source: AsyncIterable<T>, hooks: MeterHooks<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const outcome: MeterOutcome = { failed: false, consumerLeft: true };
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      hooks.observe(next.value);
      yield next.value;
    }
    outcome.consumerLeft = false;
  } catch (error) {
    outcome.failed = true;
    outcome.consumerLeft = false;
    throw error;
  } finally {
    if (outcome.consumerLeft) {
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) hooks.observe(next.value);
      } catch {
        outcome.failed = true;
      }
    }
    // A settlement hook that threw must not take the answer down with it; hooks end their reservations themselves.
    try {
      hooks.settle(outcome);
    } catch {
      // the hook's own failure, nothing the consumer could act on
    }
  }
}

/**
 * Pulls the first item now, so a failure before the first byte surfaces to the caller (and becomes an HTTP
 * error) instead of a broken stream; returns an iterable of that item and the rest. Ending it early, even
 * before the first read, always returns the source, so a metered source still drains and settles.
 */
export async function startIteration<T>(source: AsyncIterable<T>): Promise<AsyncIterable<T>> {
  const iterator = source[Symbol.asyncIterator]();
  let pending: IteratorResult<T> | undefined = await iterator.next();
  const rest: AsyncIterator<T> = {
    next: async () => {
      if (pending) {
        const first = pending;
        pending = undefined;
        return first;
      }
      return iterator.next();
    },
    return: async (value?: unknown) => {
      pending = undefined;
      await iterator.return?.();
      return { done: true, value: value as T };
    },
  };
  return { [Symbol.asyncIterator]: () => rest };
}
