import type pg from 'pg';
import { ascending, percentile } from '../stats.ts';

/** Lateness of a tick's runs against the tick's time, in ms. */
export interface LagSummary {
  n: number;
  p50: number;
  p99: number;
  max: number;
}

/** What Postgres recorded of one tick. */
export interface TickRecord {
  scheduledAt: string;
  /** Tick rows by outcome: fired, skipped, missed. */
  outcomes: Record<string, number>;
  /** Run created (the tick recorded, in the same statement) minus the tick's time. */
  created: LagSummary | null;
  /** Run picked by a worker minus the tick's time; null without workers. */
  started: LagSummary | null;
}

export function lagSummary(values: Iterable<number>): LagSummary | null {
  const sorted = ascending(values);
  if (sorted.length === 0) return null;
  return {
    n: sorted.length,
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1] ?? Number.NaN,
  };
}

/** Reads one tick's rows and its runs' times (after the measurement: these reads are not in it). */
export async function readTick(db: pg.Client, scheduledAt: Date): Promise<TickRecord> {
  const { rows } = await db.query<{ outcome: string; created_ms: number | null; started_ms: number | null }>(
    `SELECT t.outcome,
            (extract(epoch FROM r.created_at - t.scheduled_at) * 1000)::float8 AS created_ms,
            (extract(epoch FROM r.started_at - t.scheduled_at) * 1000)::float8 AS started_ms
       FROM schedule_ticks t LEFT JOIN runs r ON r.id = t.run_id
      WHERE t.scheduled_at = $1`,
    [scheduledAt],
  );
  const outcomes: Record<string, number> = {};
  for (const row of rows) outcomes[row.outcome] = (outcomes[row.outcome] ?? 0) + 1;
  const created = rows.flatMap((row) => (row.created_ms === null ? [] : [row.created_ms]));
  const started = rows.flatMap((row) => (row.started_ms === null ? [] : [row.started_ms]));
  return {
    scheduledAt: scheduledAt.toISOString(),
    outcomes,
    created: lagSummary(created),
    started: lagSummary(started),
  };
}

/** Tick rows recorded for this tick so far, and runs of it not yet final. */
export async function tickProgress(
  db: pg.Client,
  scheduledAt: Date,
): Promise<{ recorded: number; unfinished: number }> {
  const { rows } = await db.query<{ recorded: number; unfinished: number }>(
    `SELECT count(*)::int AS recorded,
            count(*) FILTER (WHERE r.status IN ('QUEUED', 'RUNNING'))::int AS unfinished
       FROM schedule_ticks t LEFT JOIN runs r ON r.id = t.run_id
      WHERE t.scheduled_at = $1`,
    [scheduledAt],
  );
  return rows[0] ?? { recorded: 0, unfinished: 0 };
}

/**
 * Without workers: the QUEUED runs the schedules created are marked finished, as a fleet of
 * workers elsewhere would finish them, so no backlog (and no reconciler pass over it) is left
 * for the window between ticks. Their BullMQ jobs stay in Redis's wait list, which nothing reads.
 */
export async function finishScheduledRuns(db: pg.Client): Promise<number> {
  const result = await db.query(
    `UPDATE runs SET status = 'SUCCEEDED', finished_at = now()
      WHERE status = 'QUEUED' AND source = 'schedule'`,
  );
  return result.rowCount ?? 0;
}
