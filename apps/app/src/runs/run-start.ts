import type { Pool } from '../db/pool.ts';

/** Why `markRunning` did or did not start a run. */
export type StartResult =
  | 'started'
  /** A paused run's due resume job started it: PAUSED → RUNNING, counting the resume. */
  | 'resumed'
  /** The run is final already (its job came back after it ended, or its caller left). */
  | 'ended'
  /** Its flow has `maxRunning` runs running: the run stays as it was (QUEUED, or PAUSED). */
  | 'busy'
  /** The run is PAUSED at another pause than the job's: the job came back after it paused again. */
  | 'paused'
  /** The run waits to run another resume than the job's: the job is an earlier pause's. */
  | 'superseded';

type Named = (name: string) => { name?: string };

/**
 * The flow's running runs, counted in the statement that starts one (read committed: apps
 * starting runs of one flow at the same instant may pass the bound by as many).
 */
const busy = (maxRunning: number) =>
  maxRunning === 0
    ? 'busy AS (SELECT false AS is_full),'
    : `busy AS (SELECT count(*) >= $4 AS is_full FROM (SELECT 1 FROM runs WHERE status = 'RUNNING'
         AND flow_id = (SELECT flow_id FROM run) AND id <> $1 LIMIT $4) b),`;

/** A first start's job (or a retry of it): QUEUED (or RUNNING, a lost worker's retry) → RUNNING. */
const START = (
  maxRunning: number,
) => `WITH run AS (SELECT id, flow_id, status, resumes FROM runs WHERE id = $1),
  ${busy(maxRunning)}
  started AS (UPDATE runs SET status = 'RUNNING', worker_id = $2, started_at = now(),
    attempts = attempts + 1
    WHERE id = $1 AND status IN ('QUEUED', 'RUNNING') AND ($3::integer IS NULL OR resumes = $3)
      AND NOT (SELECT is_full FROM busy) RETURNING id)
  SELECT run.status, run.resumes, (SELECT is_full FROM busy) AS busy,
    EXISTS (SELECT 1 FROM started) AS started, false AS resumed FROM run`;

/**
 * The n-th resume's job ($3 = n): the resume a request or the reconciler made (QUEUED with n
 * resumes, or RUNNING for a lost worker's retry) starts as any job; and a run PAUSED at the pause
 * this job was set for (n - 1 resumes: the pause's delayed job, now due) resumes here, PAUSED →
 * RUNNING in one conditional update, so it resumes once whoever else tries (a request, the
 * reconciler). The resume counts its attempts from 1 and takes its pause's waiting points.
 */
const START_RESUME = (
  maxRunning: number,
) => `WITH run AS (SELECT id, flow_id, status, resumes FROM runs WHERE id = $1),
  ${busy(maxRunning)}
  started AS (UPDATE runs SET status = 'RUNNING', worker_id = $2, started_at = now(), resumes = $3,
    attempts = CASE WHEN status = 'PAUSED' THEN 1 ELSE attempts + 1 END, paused_at = NULL
    WHERE id = $1 AND NOT (SELECT is_full FROM busy)
      AND ((status IN ('QUEUED', 'RUNNING') AND resumes = $3) OR (status = 'PAUSED' AND resumes = $3 - 1))
    RETURNING id),
  resumed AS (SELECT started.id FROM started, run WHERE run.status = 'PAUSED'),
  taken AS (UPDATE run_waits SET pause = NULL FROM resumed
    WHERE run_waits.run_id = resumed.id AND run_waits.pause IS NOT NULL)
  SELECT run.status, run.resumes, (SELECT is_full FROM busy) AS busy,
    EXISTS (SELECT 1 FROM started) AS started, EXISTS (SELECT 1 FROM resumed) AS resumed FROM run`;

/**
 * Starts a run for `workerId` from its job: `resume` is the job's (0 for a run's first start, n
 * for its n-th resume). The run's row as it was and the update in one statement: a run that did
 * not start says why.
 */
export async function markRunning(
  pool: Pool,
  named: Named,
  maxRunning: number,
  runId: string,
  workerId: string,
  resume: number | undefined,
): Promise<StartResult> {
  const resuming = resume !== undefined && resume > 0;
  const suffix = maxRunning === 0 ? '' : '-bounded';
  const { rows } = await pool.query<{
    status: string;
    resumes: number;
    busy: boolean;
    started: boolean;
    resumed: boolean;
  }>({
    ...named(`${resuming ? 'runs-mark-resumed' : 'runs-mark-running'}${suffix}`),
    text: resuming ? START_RESUME(maxRunning) : START(maxRunning),
    values:
      maxRunning === 0 ? [runId, workerId, resume ?? null] : [runId, workerId, resume ?? null, maxRunning],
  });
  const row = rows[0];
  if (row === undefined) return 'ended';
  if (row.resumed) return 'resumed';
  if (row.started) return 'started';
  if (row.status === 'PAUSED') return row.busy && resuming && row.resumes === resume - 1 ? 'busy' : 'paused';
  if (row.status !== 'QUEUED' && row.status !== 'RUNNING') return 'ended';
  if (resume !== undefined && row.resumes !== resume) return 'superseded';
  return row.busy ? 'busy' : 'ended';
}
