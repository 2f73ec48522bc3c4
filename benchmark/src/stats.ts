/** Median and spread of one figure over a scenario's repeats (or over any sample). */
export interface Spread {
  median: number;
  min: number;
  max: number;
  /** Interquartile range bounds (25th and 75th percentile). */
  q1: number;
  q3: number;
  n: number;
}

/**
 * The p-th percentile (0..100) of an ascending array, interpolating linearly between the two
 * closest ranks (the spreadsheet PERCENTILE.INC rule), so a few samples still give stable values.
 */
export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = (Math.min(100, Math.max(0, p)) / 100) * (sorted.length - 1);
  const low = Math.floor(rank);
  const high = Math.ceil(rank);
  const lowValue = sorted[low] ?? Number.NaN;
  const highValue = sorted[high] ?? Number.NaN;
  return lowValue + (highValue - lowValue) * (rank - low);
}

export function ascending(values: Iterable<number>): number[] {
  return [...values].filter((v) => Number.isFinite(v)).sort((a, b) => a - b);
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  let sum = 0;
  for (const value of values) sum += value;
  return sum / values.length;
}

/** Median, min/max and IQR of the finite values; null when there are none. */
export function summarize(values: Iterable<number | null | undefined>): Spread | null {
  const finite: number[] = [];
  for (const value of values) if (typeof value === 'number' && Number.isFinite(value)) finite.push(value);
  const sorted = ascending(finite);
  if (sorted.length === 0) return null;
  return {
    median: percentile(sorted, 50),
    min: sorted[0] ?? Number.NaN,
    max: sorted[sorted.length - 1] ?? Number.NaN,
    q1: percentile(sorted, 25),
    q3: percentile(sorted, 75),
    n: sorted.length,
  };
}

/** Latency figures of one load run, in milliseconds. */
export interface LatencySummary {
  mean: number;
  p50: number;
  p95: number;
  p99: number;
  max: number;
}

export function latencySummary(latenciesMs: readonly number[]): LatencySummary | null {
  const sorted = ascending(latenciesMs);
  if (sorted.length === 0) return null;
  return {
    mean: mean(sorted),
    p50: percentile(sorted, 50),
    p95: percentile(sorted, 95),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}
