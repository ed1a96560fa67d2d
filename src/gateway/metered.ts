export interface MeterOutcome {
  /** The source threw (a cut stream, an upstream error mid-way). */
  failed: boolean;
  /** The consumer stopped early (the client went away); the source was still read to its end or to the limit. */
  consumerLeft: boolean;
}

/** The held output limit, as a meter enforces it on the items of its source. */
export interface MeterLimit<T> {
  /** Whether the item may be delivered: false for output once what was delivered has reached the limit. */
  admits(item: T): boolean;
  /** What ends the answer in place of the item refused and the rest: the answer's length finish. */
  ending(): T[];
}

export interface MeterHooks<T> {
  observe(item: T): void;
  /** Runs exactly once, after the source has been read to its end, to the limit, or failed; settles without waiting. */
  settle(outcome: MeterOutcome): void;
  limit?: MeterLimit<T>;
}

/** Stops reading a source the limit ended: its upstream exchange is closed. */
async function letGo<T>(iterator: AsyncIterator<T>): Promise<void> {
  try {
    await iterator.return?.();
  } catch {
    // the source's own cleanup failed; nothing more of it is read either way
  }
}

/**
 * Passes the source through while observing every item, and settles once at the very end. When the consumer
 * stops early, the rest of the source is still read (and observed), so a client that went away is billed
 * like one that stayed. The settlement is not awaited: the answer ends as soon as its last item is through,
 * while the hold (which covers the whole cost) stays in place until the settlement replaces it.
 *
 * With a `limit`, the first item it refuses ends the source there, whether the consumer is still reading or
 * not: the source is let go of (its upstream is not read to the end nor until a time-out), and the consumer
 * gets the limit's ending in place of the rest.
 */
export async function* metered<T>(source: AsyncIterable<T>, hooks: MeterHooks<T>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  const outcome: MeterOutcome = { failed: false, consumerLeft: true };
  const { limit } = hooks;
  let ended = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      if (limit && !limit.admits(next.value)) {
        ended = true;
        await letGo(iterator);
        // Observed before any is yielded: a consumer that leaves among them still ends with the whole ending metered.
        const ending = limit.ending();
        for (const item of ending) hooks.observe(item);
        for (const item of ending) yield item;
        break;
      }
      hooks.observe(next.value);
      yield next.value;
    }
    outcome.consumerLeft = false;
  } catch (error) {
    outcome.failed = true;
    outcome.consumerLeft = false;
    throw error;
  } finally {
    if (outcome.consumerLeft && !ended) {
      try {
        for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
          if (limit && !limit.admits(next.value)) {
            await letGo(iterator);
            for (const item of limit.ending()) hooks.observe(item);
            break;
          }
          hooks.observe(next.value);
        }
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
