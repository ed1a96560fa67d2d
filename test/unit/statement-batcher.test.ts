import { afterEach, describe, expect, it, vi } from 'vitest';
import { StatementBatcher } from '../../src/storage/statement-batcher.ts';

/** A fake statement runner: each call waits for the test to let it finish, and is recorded. */
function runner(options: { failManyWith?: (inputs: number[]) => boolean; shortAnswer?: boolean } = {}) {
  const calls: Array<{ kind: 'one' | 'many'; inputs: number[] }> = [];
  const one = async (input: number) => {
    calls.push({ kind: 'one', inputs: [input] });
    await Promise.resolve();
    if (input < 0) throw new Error(`statement ${input} failed`);
    return input * 10;
  };
  const many = async (inputs: number[]) => {
    calls.push({ kind: 'many', inputs });
    await Promise.resolve();
    if (options.failManyWith?.(inputs)) throw new Error('the batch failed');
    const outputs = inputs.map((input) => input * 10);
    return options.shortAnswer ? outputs.slice(1) : outputs;
  };
  return { calls, one, many };
}

describe('StatementBatcher', () => {
  it('sends work alone while slots are free and batches what arrives meanwhile, answering each caller its own result', async () => {
    const fake = runner();
    const batcher = new StatementBatcher(fake.one, fake.many, { maxBatch: 3, maxInFlight: 2 });
    const results = await Promise.all([1, 2, 3, 4, 5, 6, 7].map((input) => batcher.submit(input)));
    expect(results).toEqual([10, 20, 30, 40, 50, 60, 70]);
    expect(fake.calls).toEqual([
      { kind: 'one', inputs: [1] },
      { kind: 'one', inputs: [2] },
      { kind: 'many', inputs: [3, 4, 5] },
      { kind: 'many', inputs: [6, 7] },
    ]);
  });

  it('tries each statement of a failed batch alone, so one bad statement fails only its own caller', async () => {
    const fake = runner({ failManyWith: (inputs) => inputs.some((input) => input < 0) });
    const batcher = new StatementBatcher(fake.one, fake.many, { maxBatch: 10, maxInFlight: 1 });
    const outcomes = await Promise.allSettled([1, 2, -3, 4].map((input) => batcher.submit(input)));
    expect(
      outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : (outcome.reason as Error).message)),
    ).toEqual([10, 20, 'statement -3 failed', 40]);
    expect(fake.calls.map((call) => call.kind)).toEqual(['one', 'many', 'one', 'one', 'one']);
  });

  it('fails every caller of a failed batch, without sending any again, when the policy does not retry after its error', async () => {
    const fake = runner({ failManyWith: () => true });
    const batcher = new StatementBatcher(fake.one, fake.many, {
      maxBatch: 10,
      maxInFlight: 1,
      retriesAfter: (error) => !(error instanceof Error && error.message === 'the batch failed'),
    });
    const outcomes = await Promise.allSettled([1, 2, 3].map((input) => batcher.submit(input)));
    expect(outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'failed'))).toEqual([
      10,
      'failed',
      'failed',
    ]);
    expect(fake.calls.map((call) => call.kind)).toEqual(['one', 'many']);
  });

  it('fails every caller of a batch that answered the wrong number of results, without running it again', async () => {
    const fake = runner({ shortAnswer: true });
    const batcher = new StatementBatcher(fake.one, fake.many, { maxBatch: 10, maxInFlight: 1 });
    const outcomes = await Promise.allSettled([1, 2, 3].map((input) => batcher.submit(input)));
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['fulfilled', 'rejected', 'rejected']);
    expect(fake.calls.map((call) => call.kind)).toEqual(['one', 'many']);
  });

  describe('with a linger', () => {
    afterEach(() => {
      vi.useRealTimers();
    });

    it('holds work that finds nothing running for the linger, then sends what came meanwhile as one statement', async () => {
      vi.useFakeTimers();
      const fake = runner();
      const batcher = new StatementBatcher(fake.one, fake.many, { maxBatch: 10, maxInFlight: 1, lingerMs: 5 });
      const first = batcher.submit(1);
      await vi.advanceTimersByTimeAsync(3);
      const second = batcher.submit(2);
      expect(fake.calls).toEqual([]);
      await vi.advanceTimersByTimeAsync(2);
      expect(await Promise.all([first, second])).toEqual([10, 20]);
      expect(fake.calls).toEqual([{ kind: 'many', inputs: [1, 2] }]);
    });

    it('never delays work behind a running statement: it goes out as soon as that one returns', async () => {
      vi.useFakeTimers();
      let finishFirst = () => {};
      const calls: number[][] = [];
      const many = async (inputs: number[]) => {
        calls.push(inputs);
        if (calls.length === 1) await new Promise<void>((resolve) => (finishFirst = resolve));
        return inputs;
      };
      const batcher = new StatementBatcher(async (input: number) => (await many([input]))[0]!, many, {
        maxBatch: 10,
        maxInFlight: 1,
        lingerMs: 5,
      });
      const first = batcher.submit(1);
      await vi.advanceTimersByTimeAsync(5);
      expect(calls).toEqual([[1]]);
      const queued = [batcher.submit(2), batcher.submit(3)];
      finishFirst();
      // No timer moves: the queued pair is sent when the running statement returns.
      expect(await Promise.all([first, ...queued])).toEqual([1, 2, 3]);
      expect(calls).toEqual([[1], [2, 3]]);
    });
  });
});
