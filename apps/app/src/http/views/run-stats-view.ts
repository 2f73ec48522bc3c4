import { z } from 'zod';
import { DateTime } from './date-time.ts';

const Count = z.number().int().min(0);
const Percentile = z.number().nullable();

/** Runs accepted in a stretch of time, by outcome so far, and the latency of the finished ones. */
const StatsFigures = z.object({
  succeeded: Count,
  failed: Count.describe('FAILED, TIMEOUT or INTERNAL_ERROR.'),
  inFlight: Count.describe('Still QUEUED, RUNNING or PAUSED.'),
  p50Ms: Percentile.describe('Percentile of totalMs of the finished runs; null when none finished.'),
  p95Ms: Percentile,
  p99Ms: Percentile,
});

export const RunStatsView = z
  .object({
    now: DateTime.describe("The database's clock when the figures were taken."),
    windowSeconds: z.number().int(),
    bucketSeconds: z.number().int(),
    buckets: z
      .array(StatsFigures.extend({ start: DateTime }))
      .describe('Every bucket of the window, oldest first, empty ones included.'),
    total: StatsFigures.describe('The whole window as one bucket.'),
  })
  .meta({ id: 'RunStats' });
export type RunStatsView = z.infer<typeof RunStatsView>;
