import type { ProviderRow } from '../catalog/catalog.ts';
import type { RoutingStrategyName } from '../domain/generation-route.ts';
import type { RowRef } from '../domain/provider-rows.ts';

/** Samples of first-byte time a row's moving median is taken over. */
const windowSize = 32;
/** One scratch buffer for every median: a median is computed synchronously, so one at a time. */
const scratch = new Float64Array(windowSize);

/** The latest first-byte times of one row, with their median, recomputed as each sample comes in. */
class LatencyWindow {
  private readonly samples = new Float64Array(windowSize);
  private count = 0;
  private next = 0;
  median = 0;

  add(milliseconds: number): void {
    this.samples[this.next] = milliseconds;
    this.next = (this.next + 1) % windowSize;
    if (this.count < windowSize) this.count += 1;
    // Insertion sort of at most 32 numbers into the shared scratch: no allocation, a few hundred comparisons.
    for (let index = 0; index < this.count; index += 1) {
      const value = this.samples[index]!;
      let at = index;
      while (at > 0 && scratch[at - 1]! > value) {
        scratch[at] = scratch[at - 1]!;
        at -= 1;
      }
      scratch[at] = value;
    }
    const middle = this.count >> 1;
    this.median = this.count % 2 === 1 ? scratch[middle]! : (scratch[middle - 1]! + scratch[middle]!) / 2;
  }
}

/**
 * Time to first byte of each provider row, in this process's memory: the moving median (p50) of the latest
 * samples, read by `routing: latency`. A sample costs a short sort of a fixed buffer; a read is two map lookups.
 */
export class RowLatencies {
  private readonly byProvider = new Map<string, Map<string, LatencyWindow>>();

  record(row: RowRef, milliseconds: number): void {
    let byModel = this.byProvider.get(row.providerId);
    if (!byModel) {
      byModel = new Map();
      this.byProvider.set(row.providerId, byModel);
    }
    let window = byModel.get(row.upstreamModel);
    if (!window) {
      window = new LatencyWindow();
      byModel.set(row.upstreamModel, window);
    }
    window.add(milliseconds);
  }

  /** The row's moving p50 in milliseconds; undefined before its first sample. */
  p50(row: RowRef): number | undefined {
    return this.byProvider.get(row.providerId)?.get(row.upstreamModel)?.median;
  }
}

/** What the strategies other than `priority` read: the rows' latencies and a source of randomness (seeded in tests). */
export interface RowRouting {
  latencies: RowLatencies;
  random: () => number;
}

/**
 * Orders a request's candidate rows, in place, by the model's strategy; the rows come in priority order.
 * - `priority`: unchanged.
 * - `weighted`: one row drawn by its `weight` goes first; the others follow in priority order as fallbacks.
 * - `latency`: rows without a sample first (so they get one), then by lowest moving p50 of first byte.
 * - `price`: by lowest operator cost; rows that name none go last.
 * Ties keep priority order (the sort is stable).
 */
export function orderRows<R extends RowRef & { row: ProviderRow }>(
  rows: R[],
  strategy: RoutingStrategyName,
  routing: RowRouting,
): void {
  if (rows.length < 2) return;
  if (strategy === 'weighted') {
    const drawn = drawByWeight(rows, routing.random);
    if (drawn > 0) {
      const first = rows[drawn]!;
      rows.copyWithin(1, 0, drawn);
      rows[0] = first;
    }
  } else if (strategy === 'latency') {
    const { latencies } = routing;
    rows.sort((a, b) => {
      const left = latencies.p50(a);
      const right = latencies.p50(b);
      if (left === undefined || right === undefined) return left === right ? 0 : left === undefined ? -1 : 1;
      return left - right;
    });
  } else if (strategy === 'price') {
    rows.sort((a, b) => {
      const left = a.row.operatorCost;
      const right = b.row.operatorCost;
      if (left === undefined || right === undefined) return left === right ? 0 : left === undefined ? 1 : -1;
      return left - right;
    });
  }
}

/** The index of a row drawn with probability weight / total weight; the first row when every weight is 0. */
function drawByWeight(rows: ReadonlyArray<{ row: ProviderRow }>, random: () => number): number {
  let total = 0;
  for (const candidate of rows) total += candidate.row.weight;
  if (total <= 0) return 0;
  let point = random() * total;
  for (let index = 0; index < rows.length; index += 1) {
    point -= rows[index]!.row.weight;
    if (point < 0) return index;
  }
  return rows.length - 1;
}
