import type { RowRef } from '../domain/provider-rows.ts';

/** Samples kept per row: the latest this many attempts (older ones also leave once they fall out of the window). */
const samplesPerRow = 1024;

/** The latest attempts of one row, in a fixed ring: recording one writes three slots and allocates nothing. */
class RowSamples {
  readonly at = new Float64Array(samplesPerRow);
  readonly latencyMs = new Float64Array(samplesPerRow);
  readonly failed = new Uint8Array(samplesPerRow);
  next = 0;
  size = 0;

  record(at: number, latencyMs: number, failed: boolean): void {
    this.at[this.next] = at;
    this.latencyMs[this.next] = latencyMs;
    this.failed[this.next] = failed ? 1 : 0;
    this.next = (this.next + 1) % samplesPerRow;
    if (this.size < samplesPerRow) this.size++;
  }
}

/** A row's health over the window, from this process's own attempts. */
export interface RowHealthReading {
  /** Attempts sent to the row within the window (at most the latest 1024). */
  attempts: number;
  failures: number;
  /** failures / attempts; 0 without attempts. */
  errorRate: number;
  /** Latency to the upstream's answer (its first byte for a stream), in milliseconds; absent without attempts. */
  p50Ms?: number;
  p95Ms?: number;
}

/**
 * Every provider row's latest attempts in this process, for the operator console: how many failed and how
 * long they took, over the last `windowMs`. Memory is bounded (a fixed ring per row the catalog has sent to);
 * the figures are computed only when read.
 */
export class RowHealth {
  /** By provider, then upstream model, as the breakers are: no key is built per attempt. */
  private readonly rows = new Map<string, Map<string, RowSamples>>();

  constructor(
    readonly windowMs: number = 5 * 60_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** One attempt of the row: answered (an upstream's 4xx answer too), or failed as a fallback would count it. */
  record(row: RowRef, latencyMs: number, failed: boolean): void {
    let byModel = this.rows.get(row.providerId);
    if (!byModel) {
      byModel = new Map();
      this.rows.set(row.providerId, byModel);
    }
    let samples = byModel.get(row.upstreamModel);
    if (!samples) {
      samples = new RowSamples();
      byModel.set(row.upstreamModel, samples);
    }
    samples.record(this.now(), latencyMs, failed);
  }

  reading(row: RowRef): RowHealthReading {
    const samples = this.rows.get(row.providerId)?.get(row.upstreamModel);
    if (!samples) return { attempts: 0, failures: 0, errorRate: 0 };
    const since = this.now() - this.windowMs;
    const latencies: number[] = [];
    let failures = 0;
    for (let index = 0; index < samples.size; index++) {
      if ((samples.at[index] ?? 0) < since) continue;
      latencies.push(samples.latencyMs[index] ?? 0);
      failures += samples.failed[index] ?? 0;
    }
    if (latencies.length === 0) return { attempts: 0, failures: 0, errorRate: 0 };
    latencies.sort((a, b) => a - b);
    return {
      attempts: latencies.length,
      failures,
      errorRate: failures / latencies.length,
      p50Ms: percentile(latencies, 0.5),
      p95Ms: percentile(latencies, 0.95),
    };
  }
}

/** The nearest-rank percentile of sorted values, rounded to the millisecond. */
function percentile(sorted: readonly number[], fraction: number): number {
  const rank = Math.max(0, Math.ceil(fraction * sorted.length) - 1);
  return Math.round(sorted[Math.min(rank, sorted.length - 1)] ?? 0);
}
