import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `work` and measures the longest the event loop was blocked meanwhile, in milliseconds. The sampling
 * timer records a block only when it was running before it and fires after it, so sampling starts a moment
 * before the work and goes on a moment after it.
 */
export async function longestEventLoopBlockMs<T>(work: () => Promise<T>): Promise<{ result: T; blockedMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  await new Promise((resolve) => setTimeout(resolve, 50));
  const result = await work();
  await new Promise((resolve) => setTimeout(resolve, 50));
  histogram.disable();
  return { result, blockedMs: histogram.max / 1e6 };
}
