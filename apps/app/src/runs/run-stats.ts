import type { Pool } from '../db/pool.ts';

export interface RunStatsQuery {
  flowId?: string | undefined;
  windowSeconds: number;
  bucketSeconds: number;
}

/** Runs accepted in one bucket of time, by outcome so far, and the latency of those finished. */
export interface RunStatsBucket {
  /** The bucket's start (aligned to a multiple of bucketSeconds since the epoch). */
  start: string;
  succeeded: number;
  failed: number;
  /** Still QUEUED or RUNNING. */
  inFlight: number;
  /** Percentiles of totalMs (accepted → the worker's result) of its finished runs; null when none. */
  p50Ms: number | null;
  p95Ms: number | null;
  p99Ms: number | null;
}

export interface RunStats {
  /** The database's clock when the figures were taken. */
  now: string;
  windowSeconds: number;
  bucketSeconds: number;
  /** Every bucket of the window, oldest first, empty ones included. */
  buckets: RunStatsBucket[];
  /** The whole window as one bucket. */
  total: Omit<RunStatsBucket, 'start'>;
}

interface StatsRow {
  bucket: number | null;
  now_s: number;
  succeeded: string;
  failed: string;
  in_flight: string;
  latency: Array<number | null> | null;
}

/**
 * Throughput and latency percentiles of the runs accepted in the last `windowSeconds`, per
 * bucket and over the whole window, computed by Postgres in one statement (GROUPING SETS): a
 * range scan of the created_at index (with the flow's when filtered), so its cost follows the
 * runs in the window, not the table. Postgres rather than the app's Prometheus histograms: it
 * covers every app instance and its percentiles are exact, not bucket estimates.
 */
export async function queryRunStats(pool: Pool, query: RunStatsQuery): Promise<RunStats> {
  const values: unknown[] = [query.windowSeconds, query.bucketSeconds];
  const flowFilter = query.flowId === undefined ? '' : `AND flow_id = $${values.push(query.flowId)}`;
  const { rows } = await pool.query<StatsRow>(
    `SELECT (floor(extract(epoch FROM created_at) / $2) * $2)::float8 AS bucket,
            extract(epoch FROM now())::float8 AS now_s,
            count(*) FILTER (WHERE status = 'SUCCEEDED') AS succeeded,
            count(*) FILTER (WHERE status IN ('FAILED', 'TIMEOUT', 'INTERNAL_ERROR')) AS failed,
            count(*) FILTER (WHERE status IN ('QUEUED', 'RUNNING', 'PAUSED')) AS in_flight,
            percentile_cont(ARRAY[0.5, 0.95, 0.99]::float8[])
              WITHIN GROUP (ORDER BY (timings->>'totalMs')::float8) AS latency
     FROM runs
     WHERE created_at >= now() - make_interval(secs => $1) ${flowFilter}
     GROUP BY GROUPING SETS ((1), ())`,
    values,
  );
  const figures = (row: StatsRow | undefined): Omit<RunStatsBucket, 'start'> => {
    const latency = (index: number) => {
      const value = row?.latency?.[index];
      return value === null || value === undefined ? null : Math.round(value * 10) / 10;
    };
    return {
      succeeded: Number(row?.succeeded ?? 0),
      failed: Number(row?.failed ?? 0),
      inFlight: Number(row?.in_flight ?? 0),
      p50Ms: latency(0),
      p95Ms: latency(1),
      p99Ms: latency(2),
    };
  };
  // The grand total's row (the empty grouping set) is there even when no run is in the window.
  const total = rows.find((row) => row.bucket === null);
  if (total === undefined) throw new Error('run stats: the grand total row is missing');
  const nowSeconds = total.now_s;
  const byBucket = new Map(rows.filter((row) => row.bucket !== null).map((row) => [row.bucket, row]));
  const size = query.bucketSeconds;
  const last = Math.floor(nowSeconds / size) * size;
  const first = Math.floor((nowSeconds - query.windowSeconds) / size) * size;
  const buckets: RunStatsBucket[] = [];
  for (let start = first; start <= last; start += size) {
    buckets.push({ start: new Date(start * 1000).toISOString(), ...figures(byBucket.get(start)) });
  }
  return {
    now: new Date(nowSeconds * 1000).toISOString(),
    windowSeconds: query.windowSeconds,
    bucketSeconds: size,
    buckets,
    total: figures(total),
  };
}
