import type { Pool } from '../db/pool.ts';

/** What one retention batch deleted. */
export interface RemovedRun {
  id: string;
  logKey: string | null;
  /** Its resumes: its checkpoints are `checkpoints/<id>/0..resumes.json`. */
  resumes: number;
}

const UNFINISHED = new Set(['QUEUED', 'RUNNING', 'PAUSED']);

/** Where a pass's previous batch ended in the order (created_at, id). */
export interface RetentionCursor {
  /** created_at as Postgres prints it (microseconds kept). */
  createdAt: string;
  id: string;
}

/**
 * Up to `limit` finished runs created more than `olderThanDays` ago, oldest first, after
 * `after`: what retention deletes next. Reading first lets their S3 logs go before their rows.
 */
export async function queryRetentionBatch(
  pool: Pool,
  olderThanDays: number,
  limit: number,
  after?: RetentionCursor,
): Promise<{ runs: RemovedRun[]; next: RetentionCursor | null }> {
  // runs_page (created_at, id) reads them oldest first; unfinished runs (paused ones too) are
  // left to the reconciler and the sweeper, whatever their age. The cursor skips those a pass
  // already passed over, so old unfinished runs are read once a pass, not once a batch.
  const { rows } = await pool.query<{
    id: string;
    status: string;
    log_key: string | null;
    resumes: number;
    at: string;
  }>(
    `SELECT id, status, log_key, resumes, to_char(created_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"') AS at
     FROM runs
     WHERE created_at < now() - make_interval(days => $1)
       AND ($3::timestamptz IS NULL OR (created_at, id) > ($3::timestamptz, $4::uuid))
     ORDER BY created_at, id LIMIT $2`,
    [olderThanDays, limit, after?.createdAt ?? null, after?.id ?? null],
  );
  const last = rows.at(-1);
  return {
    runs: rows
      .filter((row) => !UNFINISHED.has(row.status))
      .map((row) => ({ id: row.id, logKey: row.log_key, resumes: row.resumes })),
    next: last === undefined || rows.length < limit ? null : { createdAt: last.at, id: last.id },
  };
}

/** Deletes these runs, leaving a tombstone for each; returns how many rows went. */
export async function removeRuns(pool: Pool, runIds: readonly string[]): Promise<number> {
  if (runIds.length === 0) return 0;
  const { rows } = await pool.query<{ removed: number }>(
    `WITH gone AS (DELETE FROM runs WHERE id = ANY($1::uuid[]) RETURNING id),
          kept AS (INSERT INTO run_tombstones (id) SELECT id FROM gone ON CONFLICT (id) DO NOTHING)
     SELECT count(*)::int AS removed FROM gone`,
    [runIds],
  );
  return rows[0]?.removed ?? 0;
}

/** Deletes tombstones older than `olderThanDays`; returns how many. */
export async function pruneTombstones(pool: Pool, olderThanDays: number): Promise<number> {
  const result = await pool.query(
    'DELETE FROM run_tombstones WHERE removed_at < now() - make_interval(days => $1)',
    [olderThanDays],
  );
  return result.rowCount ?? 0;
}

/**
 * Deletes schedule ticks older than `olderThanDays`, but never a flow's latest: the ticker reads
 * it to know where its schedule stands. Returns how many.
 */
export async function pruneScheduleTicks(pool: Pool, olderThanDays: number): Promise<number> {
  const result = await pool.query(
    `DELETE FROM schedule_ticks t WHERE t.scheduled_at < now() - make_interval(days => $1)
       AND t.scheduled_at < (SELECT max(l.scheduled_at) FROM schedule_ticks l WHERE l.flow_id = t.flow_id)`,
    [olderThanDays],
  );
  return result.rowCount ?? 0;
}
