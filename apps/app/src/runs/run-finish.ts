import { randomUUID } from 'node:crypto';
import {
  type JobProvisioning,
  type JobTimings,
  type RunIsolation,
  type RunOutcome,
  runStatusOf,
  type SerializedError,
  type TriggerPayload,
  TriggerPayloadSchema,
} from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
import { ERROR_FLOW_STATUSES, errorFlowDetails } from './error-flow.ts';

/** The columns the final write sets; `before.open` says whether the run was not final yet. */
const SET_FINAL = `
  status = CASE WHEN before.open THEN $2::text ELSE r.status END,
  error = CASE WHEN before.open THEN $3::jsonb ELSE r.error END,
  steps = CASE WHEN before.open THEN coalesce($4::jsonb, r.steps) ELSE r.steps END,
  log_key = CASE WHEN before.open THEN $5 ELSE r.log_key END,
  log_error = CASE WHEN before.open THEN $6::jsonb ELSE r.log_error END,
  finished_at = CASE WHEN before.open THEN now() ELSE r.finished_at END,
  timings = CASE WHEN $7::jsonb IS NULL THEN r.timings ELSE $7::jsonb || jsonb_build_object('totalMs',
    round(extract(epoch FROM (clock_timestamp() - r.created_at)) * 1000)) END,
  provisioning = coalesce($8::jsonb, r.provisioning),
  isolation = coalesce($9, r.isolation)`;

const OPEN = "status IN ('QUEUED', 'RUNNING')";

/**
 * `before` locks the row and says whether it was final already; totalMs is measured on the
 * database's clock, like created_at, so the parts add up against it.
 */
const FINISH = `UPDATE runs r SET ${SET_FINAL}
  FROM (SELECT id, ${OPEN} AS open FROM runs WHERE id = $1 FOR UPDATE) before
  WHERE r.id = before.id
  RETURNING before.open AS finalised, (r.timings->>'totalMs')::float8 AS total_ms, r.parent_run_id`;

/**
 * The final write of a failed run, and in the same statement its error flow's run: QUEUED, its
 * trigger the failed run's report, `caused_by` naming it (unique: one error run per failed run).
 * Only when this write finalises the run, the run is no error run itself (one level), and its
 * version names an `onFailure` flow that is live, published and enabled; otherwise the reason
 * the named flow could not start is kept on the failed run. $10: the report's error and failed
 * step; $11: the error run's id.
 */
const FINISH_FAILED = `WITH before AS (
    SELECT id, flow_id, flow_version_id, caused_by, ${OPEN} AS open FROM runs WHERE id = $1 FOR UPDATE),
  named AS (
    SELECT v.definition->>'onFailure' AS flow_id
    FROM before JOIN flow_versions v ON v.id = before.flow_version_id
    WHERE before.open AND before.caused_by IS NULL AND v.definition->>'onFailure' IS NOT NULL),
  target AS (
    SELECT named.flow_id, f.id IS NOT NULL AS live, f.published_version_id, coalesce(f.enabled, false) AS enabled
    FROM named LEFT JOIN flows f ON f.id = named.flow_id AND f.deleted_at IS NULL),
  skipped AS (
    SELECT CASE
      WHEN NOT live THEN 'error flow ' || flow_id || ' does not exist (deleted)'
      WHEN published_version_id IS NULL THEN 'error flow ' || flow_id || ' has no published version'
      WHEN NOT enabled THEN 'error flow ' || flow_id || ' is disabled'
    END AS reason FROM target),
  report AS (
    SELECT jsonb_build_object('runId', before.id, 'flowId', before.flow_id,
      'flowVersionId', before.flow_version_id, 'status', $2::text) || $10::jsonb AS body FROM before),
  error_run AS (
    INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, rank, caused_by, source)
    SELECT $11::uuid, t.flow_id, t.published_version_id, 'QUEUED', false,
      jsonb_build_object('method', 'POST', 'headers', jsonb_build_object('content-type', 'application/json'),
        'query', '{}'::jsonb, 'body', report.body, 'rawBody', report.body::text, 'rawBodyEncoding', 'utf8'),
      (SELECT coalesce(max(rank), 0) + 1 FROM runs WHERE flow_id = t.flow_id AND status = 'QUEUED'),
      $1::uuid, 'error_flow'
    FROM target t, report
    WHERE t.live AND t.published_version_id IS NOT NULL AND t.enabled
    ON CONFLICT (caused_by) WHERE caused_by IS NOT NULL DO NOTHING
    RETURNING id, flow_id, flow_version_id, rank, trigger),
  finished AS (
    UPDATE runs r SET ${SET_FINAL},
      error_flow_skipped = CASE WHEN before.open THEN (SELECT reason FROM skipped) ELSE r.error_flow_skipped END
    FROM before WHERE r.id = before.id
    RETURNING before.open AS finalised, (r.timings->>'totalMs')::float8 AS total_ms, r.error_flow_skipped,
      r.parent_run_id)
  SELECT finished.finalised, finished.total_ms, finished.error_flow_skipped, finished.parent_run_id,
    (SELECT flow_id FROM named) AS error_flow,
    (SELECT row_to_json(e) FROM error_run e) AS error_run
  FROM finished`;

/**
 * What the final write records: a run's outcome (its steps and log key kept from before when
 * absent) with the worker's latency anatomy (`totalMs`, accepted → now, is added on the
 * database's clock) and provisioning.
 */
export interface FinishRunInput {
  outcome: Omit<RunOutcome, 'steps' | 'logKey'> & Partial<Pick<RunOutcome, 'steps' | 'logKey'>>;
  timings?: JobTimings | undefined;
  provisioning?: JobProvisioning | undefined;
  isolation?: RunIsolation | undefined;
  /** False: a failed run's error flow is not started (the last-resort write after refusals). */
  startErrorFlow?: boolean | undefined;
}

/** What the final write did: whether it finalised the run, and the run's totalMs when it has one. */
export interface FinishResult {
  finalised: boolean;
  /** Accepted → now on the database's clock; null when no timings came (the worker did not report). */
  totalMs: number | null;
  /**
   * When the write finalised a failed run whose version names an `onFailure` flow (and the run is
   * no error run itself): the error run it created in the same statement (to enqueue), or why
   * none could start.
   */
  errorFlow?: { flowId: string; run: ErrorRun | null; skipped: string | null };
  /** A sub-flow's run: the run whose `flow` step started it (its end answers that step). */
  parentRunId?: string;
}

/**
 * Runs past their deadline with nobody left to report them (RunsRepository.sweepOverdue), ended
 * with $2 in status $3; each one's error flow run created in the same statement, as a final
 * write creates it (FINISH_FAILED). $4: the report's error and failed step.
 */
const SWEEP = `WITH swept AS (
    UPDATE runs r SET status = $3, error = $2, finished_at = now(),
      error_flow_skipped = (
        SELECT CASE
          WHEN f.id IS NULL THEN 'error flow ' || (v.definition->>'onFailure') || ' does not exist (deleted)'
          WHEN f.published_version_id IS NULL THEN 'error flow ' || f.id || ' has no published version'
          WHEN NOT f.enabled THEN 'error flow ' || f.id || ' is disabled'
        END
        FROM flow_versions v LEFT JOIN flows f ON f.id = v.definition->>'onFailure' AND f.deleted_at IS NULL
        WHERE v.id = r.flow_version_id AND r.caused_by IS NULL AND v.definition->>'onFailure' IS NOT NULL)
    WHERE r.status = 'RUNNING' AND r.started_at < now() - make_interval(secs => $1)
    RETURNING r.id, r.flow_id, r.flow_version_id, r.caused_by, r.parent_run_id),
  targets AS (
    SELECT s.id AS failed_id, s.flow_id AS failed_flow_id, s.flow_version_id AS failed_version_id,
      f.id AS flow_id, f.published_version_id
    FROM swept s JOIN flow_versions v ON v.id = s.flow_version_id
      JOIN flows f ON f.id = v.definition->>'onFailure' AND f.deleted_at IS NULL
    WHERE s.caused_by IS NULL AND f.enabled AND f.published_version_id IS NOT NULL),
  error_runs AS (
    INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, rank, caused_by, source)
    SELECT gen_random_uuid(), t.flow_id, t.published_version_id, 'QUEUED', false,
      jsonb_build_object('method', 'POST', 'headers', jsonb_build_object('content-type', 'application/json'),
        'query', '{}'::jsonb, 'body', b.body, 'rawBody', b.body::text, 'rawBodyEncoding', 'utf8'),
      (SELECT coalesce(max(rank), 0) + 1 FROM runs WHERE flow_id = t.flow_id AND status = 'QUEUED'),
      t.failed_id, 'error_flow'
    FROM targets t, LATERAL (SELECT jsonb_build_object('runId', t.failed_id, 'flowId', t.failed_flow_id,
      'flowVersionId', t.failed_version_id, 'status', $3::text) || $4::jsonb AS body) b
    ON CONFLICT (caused_by) WHERE caused_by IS NOT NULL DO NOTHING
    RETURNING id, flow_id, flow_version_id, rank, trigger, caused_by)
  SELECT s.id, s.flow_id, s.parent_run_id,
    (SELECT row_to_json(e) FROM error_runs e WHERE e.caused_by = s.id) AS error_run
  FROM swept s`;

/** RunsRepository.sweepOverdue. */
export async function sweepOverdueRuns(
  pool: Pool,
  deadlineSeconds: number,
  error: SerializedError,
): Promise<Array<{ id: string; flowId: string; errorRun: ErrorRun | null; parentRunId: string | null }>> {
  const { rows } = await pool.query<{
    id: string;
    flow_id: string;
    parent_run_id: string | null;
    error_run: ErrorRunRow | null;
  }>(SWEEP, [deadlineSeconds, jsonb(error), runStatusOf(error.code), jsonb(errorFlowDetails({ error }))]);
  return rows.map((row) => ({
    id: row.id,
    flowId: row.flow_id,
    errorRun: row.error_run === null ? null : toErrorRun(row.error_run),
    parentRunId: row.parent_run_id,
  }));
}

interface ErrorRunRow {
  id: string;
  flow_id: string;
  flow_version_id: string;
  rank: number;
  trigger: unknown;
}

function toErrorRun(run: ErrorRunRow): ErrorRun {
  return {
    id: run.id,
    flowId: run.flow_id,
    flowVersionId: run.flow_version_id,
    rank: run.rank,
    trigger: TriggerPayloadSchema.parse(run.trigger),
  };
}

/** A run the final write started for the failed run's error flow: what enqueueing it needs. */
export interface ErrorRun {
  id: string;
  flowId: string;
  flowVersionId: string;
  rank: number;
  trigger: TriggerPayload;
}

interface FinishRow {
  finalised: boolean;
  total_ms: number | null;
  error_flow_skipped?: string | null;
  error_flow?: string | null;
  error_run?: ErrorRunRow | null;
  parent_run_id?: string | null;
}

/** Records a run's end in one statement (RunsRepository.finish). */
export async function finishRun(
  pool: Pool,
  named: (name: string) => { name?: string },
  runId: string,
  { outcome, timings, provisioning, isolation, startErrorFlow }: FinishRunInput,
): Promise<FinishResult> {
  const { status, error, steps, logKey, logError } = outcome;
  const values: unknown[] = [
    runId,
    status,
    jsonb(error),
    jsonb(steps),
    logKey ?? null,
    jsonb(logError),
    jsonb(timings),
    jsonb(provisioning),
    isolation ?? null,
  ];
  const failed = ERROR_FLOW_STATUSES.has(status) && startErrorFlow !== false;
  const { rows } = await pool.query<FinishRow>(
    failed
      ? {
          ...named('runs-finish-failed'),
          text: FINISH_FAILED,
          values: [...values, jsonb(errorFlowDetails(outcome)), randomUUID()],
        }
      : { ...named('runs-finish'), text: FINISH, values },
  );
  const row = rows[0];
  // A run finished before (swept) has no timings of its own; these are only this call's.
  const totalMs = timings === undefined ? null : (row?.total_ms ?? null);
  const result: FinishResult = { finalised: row?.finalised === true, totalMs };
  const parentRunId = row?.parent_run_id ?? null;
  if (parentRunId !== null) result.parentRunId = parentRunId;
  const errorFlow = row?.error_flow ?? null;
  if (result.finalised && errorFlow !== null) {
    const run = row?.error_run ?? null;
    result.errorFlow =
      run === null
        ? { flowId: errorFlow, run: null, skipped: row?.error_flow_skipped ?? null }
        : { flowId: errorFlow, run: toErrorRun(run), skipped: null };
  }
  return result;
}
