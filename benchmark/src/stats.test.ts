import { describe, expect, it } from 'vitest';
import { latencySummary, mean, percentile, summarize } from './stats.ts';

describe('percentile', () => {
  it('interpolates between the closest ranks', () => {
    const sorted = [1, 2, 3, 4];
    expect(percentile(sorted, 0)).toBe(1);
    expect(percentile(sorted, 50)).toBe(2.5);
    expect(percentile(sorted, 100)).toBe(4);
    expect(percentile([10, 20, 30, 40, 50], 95)).toBeCloseTo(48);
  });

  it('gives the only value for one sample and NaN for none', () => {
    expect(percentile([7], 99)).toBe(7);
    expect(percentile([], 50)).toBeNaN();
  });
});

describe('summarize', () => {
  it('gives median, extremes and quartiles, skipping missing values', () => {
    expect(summarize([5, null, 1, 3, undefined, Number.NaN])).toEqual({
      median: 3,
      min: 1,
      max: 5,
      q1: 2,
      q3: 4,
      n: 3,
    });
  });

  it('is null without values', () => {
    expect(summarize([])).toBeNull();
    expect(summarize([null])).toBeNull();
  });
});

describe('latencySummary', () => {
  it('summarizes unsorted latencies', () => {
    const values = Array.from({ length: 100 }, (_, i) => 100 - i);
    const summary = latencySummary(values);
    expect(summary?.p50).toBeCloseTo(50.5);
    expect(summary?.p95).toBeCloseTo(95.05);
    expect(summary?.p99).toBeCloseTo(99.01);
    expect(summary?.max).toBe(100);
    expect(summary?.mean).toBe(mean(values));
    expect(latencySummary([])).toBeNull();
  });
});
