import {
  type RunJobData,
  type RunPause,
  type StepResult,
  type TriggerPayload,
  TriggerPayloadSchema,
  type WaitPointKind,
} from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';

/**
 * The statements of a paused run (migration 0016): its pause, its resume, the reconciler's due
 * waits, and what a resume's dispatch reads. Each is one statement, so `pool.query`'s retry on
 * a dead connection is safe: the pause and the resume are guarded by the run's status.
 */

/** What the pause wrote; null when the run was not RUNNING (ended, swept, paused already). */
export interface PauseWritten {
  /** Resumes so far: the resume's `expectedResumes`. */
  resumes: number;
  /** The job of the resume that ends this pause (`resume: resumes + 1`), for its delayed enqueue. */
  job: RunJobData;
  /** A waiting point of this pause is answered (a request, a child's end arrived first) or due. */
  resumeNow: boolean;
  /** Milliseconds to the earliest unanswered waiting point's time (DB clock); null: none has one. */
  dueInMs: number | null;
}

/**
 * RUNNING → PAUSED with the steps so far and the checkpoint key, and the pause's waiting points
 * upserted: their times and child (a row answered first keeps its value and answered_at). Rows of
 * earlier pauses left unanswered (a timer that fired, a wait that timed out) are dropped, so a
 * due row always belongs to the pause in force.
 */
const PAUSE = `WITH paused AS (
    UPDATE runs SET status = 'PAUSED', steps = $2::jsonb, checkpoint_key = $3, paused_at = now(),
      worker_id = NULL
    WHERE id = $1 AND status = 'RUNNING'
    RETURNING id, resumes, flow_id, flow_version_id, sync_instance_id, traceparent, created_at),
  given AS (
    SELECT * FROM jsonb_to_recordset($4::jsonb)
      AS w(path text, kind text, resume_at timestamptz, timeout_at timestamptz, child_run_id uuid)),
  stale AS (
    DELETE FROM run_waits d USING paused
    WHERE d.run_id = paused.id AND d.answered_at IS NULL AND d.path NOT IN (SELECT path FROM given)),
  upserted AS (
    INSERT INTO run_waits (run_id, path, kind, resume_at, timeout_at, child_run_id, pause)
    SELECT paused.id, given.path, given.kind, given.resume_at, given.timeout_at, given.child_run_id,
      paused.resumes
    FROM paused, given
    ON CONFLICT (run_id, path) DO UPDATE SET resume_at = EXCLUDED.resume_at,
      timeout_at = EXCLUDED.timeout_at, child_run_id = EXCLUDED.child_run_id, pause = EXCLUDED.pause
    RETURNING answered_at, COALESCE(resume_at, timeout_at) AS due)
  SELECT paused.*,
    EXISTS (SELECT 1 FROM upserted WHERE answered_at IS NOT NULL OR due <= now()) AS resume_now,
    (SELECT extract(epoch FROM min(due) - now()) * 1000 FROM upserted WHERE answered_at IS NULL)::float8
      AS due_in_ms
  FROM paused`;

export async function pauseRun(
  pool: Pool,
  runId: string,
  steps: readonly StepResult[],
  pause: RunPause,
): Promise<PauseWritten | null> {
  const waits = pause.waits.map((wait) => ({
    path: wait.path,
    kind: wait.kind,
    resume_at: wait.resumeAt ?? null,
    timeout_at: wait.timeoutAt ?? null,
    child_run_id: wait.childRunId ?? null,
  }));
  const { rows } = await pool.query<
    JobRow & { resumes: number; resume_now: boolean; due_in_ms: number | null }
  >(PAUSE, [runId, jsonb(steps), pause.checkpointKey, jsonb(waits)]);
  const row = rows[0];
  if (row === undefined) return null;
  return {
    resumes: row.resumes,
    job: resumeJobOf(row, row.resumes + 1),
    resumeNow: row.resume_now,
    dueInMs: row.due_in_ms,
  };
}

/** What a resume needs of the run's row to enqueue its job. */
export interface ResumedRun {
  /** The how-many-th resume this is (the job's `resume`). */
  resumes: number;
  job: RunJobData;
}

/**
 * PAUSED → QUEUED, counting the resume: exactly one caller gets the row back, whatever calls it
 * (a request, a child's end, the reconciler, the pause itself), and none once the pause's due
 * resume job has started the run (run-start.ts). `expectedResumes` ties a call to the pause it
 * was meant for; `syncInstanceId` names the app holding a `/sync` caller. The resume gets
 * attempts of its own (RUN_MAX_ATTEMPTS): `attempts` counts from 0 again.
 */
export async function resumeRunRow(
  pool: Pool,
  runId: string,
  options: { expectedResumes?: number | undefined; syncInstanceId?: string | undefined },
): Promise<ResumedRun | null> {
  // The pause's waiting points are taken by this resume (pause = NULL): none is left for the
  // reconciler's lost resumes.
  const { rows } = await pool.query<JobRow & { resumes: number }>(
    `WITH resumed AS (
       UPDATE runs SET status = 'QUEUED', resumes = resumes + 1, attempts = 0, paused_at = NULL,
         sync_instance_id = COALESCE($2, sync_instance_id)
       WHERE id = $1 AND status = 'PAUSED' AND ($3::integer IS NULL OR resumes = $3)
       RETURNING id, flow_id, flow_version_id, sync_instance_id, traceparent, created_at, resumes),
     taken AS (
       UPDATE run_waits SET pause = NULL FROM resumed
       WHERE run_waits.run_id = resumed.id AND run_waits.pause IS NOT NULL)
     SELECT * FROM resumed`,
    [runId, options.syncInstanceId ?? null, options.expectedResumes ?? null],
  );
  const row = rows[0];
  if (row === undefined) return null;
  return { resumes: row.resumes, job: resumeJobOf(row, row.resumes) };
}

interface JobRow {
  id: string;
  flow_id: string;
  flow_version_id: string;
  sync_instance_id: string | null;
  traceparent: string | null;
  created_at: Date;
}

/** A resume's job: no trigger (its dispatch reads it from the row, see RunJobData). */
function resumeJobOf(row: JobRow, resumes: number): RunJobData {
  const job: RunJobData = {
    version: 1,
    type: 'run-flow',
    runId: row.id,
    flowId: row.flow_id,
    flowVersionId: row.flow_version_id,
    syncInstanceId: row.sync_instance_id,
    acceptedAt: row.created_at.getTime(),
    resume: resumes,
  };
  if (row.traceparent !== null) job.traceparent = row.traceparent;
  return job;
}

/** A paused run the reconciler looks at (dueRuns). */
export interface DueRun {
  runId: string;
  flowId: string;
  resumes: number;
  /** A waiting point of the pause in force was answered: its resume was lost. Else one is due. */
  answered: boolean;
}

/**
 * PAUSED runs with an unanswered waiting point due more than `graceSeconds` ago (their delayed
 * resume job is gone, Redis restarted empty or a failover lost it, or it waits behind a
 * backlog), or with a waiting point of the pause in force answered more than `graceSeconds` ago
 * (its resume was lost: the app died between the answer and the resume, or between the pause
 * and its own resume). One range read of run_waits_due and one of run_waits_answered (which
 * holds only answers no resume has taken), oldest first.
 */
export async function dueRuns(pool: Pool, graceSeconds: number, limit: number): Promise<DueRun[]> {
  const { rows } = await pool.query<{ id: string; flow_id: string; resumes: number; answered: boolean }>(
    `SELECT r.id, r.flow_id, r.resumes, bool_or(w.pause IS NOT NULL) AS answered FROM runs r
     JOIN (SELECT run_id, COALESCE(resume_at, timeout_at) AS due, NULL::integer AS pause FROM run_waits
         WHERE answered_at IS NULL AND COALESCE(resume_at, timeout_at) <= now() - make_interval(secs => $1)
       UNION ALL
       SELECT run_id, answered_at, pause FROM run_waits
         WHERE answered_at IS NOT NULL AND pause IS NOT NULL
           AND answered_at <= now() - make_interval(secs => $1)) w ON w.run_id = r.id
     WHERE r.status = 'PAUSED'
       AND (w.pause IS NULL OR (w.pause = r.resumes AND r.paused_at <= now() - make_interval(secs => $1)))
     GROUP BY r.id, r.flow_id, r.resumes
     ORDER BY min(w.due) LIMIT $2`,
    [graceSeconds, limit],
  );
  return rows.map((row) => ({
    runId: row.id,
    flowId: row.flow_id,
    resumes: row.resumes,
    answered: row.answered,
  }));
}

/** A waiting point of a paused run, as the run's view shows it. */
export interface RunWait {
  path: string;
  kind: WaitPointKind;
  resumeAt: Date | null;
  timeoutAt: Date | null;
  childRunId: string | null;
  answered: boolean;
}

export async function queryRunWaits(pool: Pool, runId: string): Promise<RunWait[]> {
  const { rows } = await pool.query<{
    path: string;
    kind: WaitPointKind;
    resume_at: Date | null;
    timeout_at: Date | null;
    child_run_id: string | null;
    answered: boolean;
  }>(
    `SELECT path, kind, resume_at, timeout_at, child_run_id, answered_at IS NOT NULL AS answered
     FROM run_waits WHERE run_id = $1 ORDER BY path`,
    [runId],
  );
  return rows.map((row) => ({
    path: row.path,
    kind: row.kind,
    resumeAt: row.resume_at,
    timeoutAt: row.timeout_at,
    childRunId: row.child_run_id,
    answered: row.answered,
  }));
}

/** What a resume's dispatch reads: the checkpoint to replay and what arrived, by path. */
export interface ResumeState {
  checkpointKey: string | null;
  /** The app holding the run's sync caller now (a `/sync` wait URL's resume names its own). */
  syncInstanceId: string | null;
  /** The request that started the run (a resume's job carries none); null: the run is gone. */
  trigger: TriggerPayload | null;
  values: Record<string, unknown>;
  /** Milliseconds past the earliest due unanswered waiting point (0: none was due). */
  lateMs: number;
}

export async function readResumeState(pool: Pool, runId: string): Promise<ResumeState> {
  const { rows } = await pool.query<{
    checkpoint_key: string | null;
    sync_instance_id: string | null;
    trigger: unknown;
    path: string | null;
    value: unknown;
    answered: boolean | null;
    late_ms: number | null;
  }>(
    `SELECT r.checkpoint_key, r.sync_instance_id, r.trigger, w.path, w.value, w.answered_at IS NOT NULL AS answered,
       CASE WHEN w.answered_at IS NULL AND COALESCE(w.resume_at, w.timeout_at) <= now()
         THEN (extract(epoch FROM now() - COALESCE(w.resume_at, w.timeout_at)) * 1000)::float8 END AS late_ms
     FROM runs r LEFT JOIN run_waits w ON w.run_id = r.id
     WHERE r.id = $1`,
    [runId],
  );
  const values: Record<string, unknown> = {};
  let lateMs = 0;
  for (const row of rows) {
    if (row.path === null) continue;
    if (row.answered === true) values[row.path] = row.value;
    if (row.late_ms !== null) lateMs = Math.max(lateMs, Math.round(row.late_ms));
  }
  return {
    checkpointKey: rows[0]?.checkpoint_key ?? null,
    syncInstanceId: rows[0]?.sync_instance_id ?? null,
    trigger: rows[0] === undefined ? null : TriggerPayloadSchema.parse(rows[0].trigger),
    values,
    lateMs,
  };
}
