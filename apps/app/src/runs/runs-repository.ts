import {
  type JobProvisioning,
  type JobTimings,
  type RunOutcome,
  runStatusOf,
  type SerializedError,
} from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
import { queryRunPage, type RunPage, type RunPageQuery } from './run-page.ts';
import { type RunRecord, toRunRecord } from './run-record.ts';
import { queryRunStats, type RunStats, type RunStatsQuery } from './run-stats.ts';

export type { RunRecord } from './run-record.ts';

/**
 * What the final write records: a run's outcome (its steps and log key kept from before when
 * absent) with the worker's latency anatomy (`totalMs`, accepted → now, is added on the
 * database's clock) and provisioning.
 */
export interface FinishRunInput {
  outcome: Omit<RunOutcome, 'steps' | 'logKey'> & Partial<Pick<RunOutcome, 'steps' | 'logKey'>>;
  timings?: JobTimings | undefined;
  provisioning?: JobProvisioning | undefined;
}

/** What the final write did: whether it finalised the run, and the run's totalMs when it has one. */
export interface FinishResult {
  finalised: boolean;
  /** Accepted → now on the database's clock; null when no timings came (the worker did not report). */
  totalMs: number | null;
}

export interface RunsRepository {
  create(input: { id: string; flowId: string; flowVersionId: string; sync: boolean }): Promise<void>;
  markRunning(runId: string, workerId: string): Promise<boolean>;
  /**
   * Puts a started run back in QUEUED for another attempt, keeping why the last one failed in
   * `error`; false when it is final already.
   */
  requeue(runId: string, error: SerializedError): Promise<boolean>;
  /**
   * Records a run's end in one statement. The first final state wins: when the run was final
   * already (the sweeper, a webhook that could not enqueue) its status, error, steps and log stay,
   * and only the timings and provisioning are added.
   */
  finish(runId: string, input: FinishRunInput): Promise<FinishResult>;
  get(runId: string): Promise<RunRecord | null>;
  /**
   * Finalises RUNNING runs started more than `deadlineSeconds` ago with `error`, in the status
   * its code gives (no worker reported them: their worker or app died). Returns their ids.
   */
  sweepOverdue(
    deadlineSeconds: number,
    error: SerializedError,
  ): Promise<Array<{ id: string; flowId: string }>>;
  /** One page of runs without their steps, by keyset cursor, filtered by flow, status and start. */
  page(query: RunPageQuery): Promise<RunPage>;
  /** Throughput and latency percentiles of the runs accepted in a recent window. */
  stats(query: RunStatsQuery): Promise<RunStats>;
}

const UNFINISHED = "status IN ('QUEUED', 'RUNNING')";

/**
 * With `preparedStatements` (the default), the statements every run makes (create, mark
 * running, finish) are named, so each connection has Postgres parse and plan them once and then
 * only binds and executes them. Off where server sessions are shared between clients (PgBouncer
 * in transaction mode, PGlite): a name would be prepared twice in one session.
 */
export function createRunsRepository(
  pool: Pool,
  options: { preparedStatements: boolean } = { preparedStatements: true },
): RunsRepository {
  const named = (name: string) => (options.preparedStatements ? { name } : {});
  return {
    async create({ id, flowId, flowVersionId, sync }) {
      await pool.query({
        ...named('runs-create'),
        text: "INSERT INTO runs (id, flow_id, flow_version_id, status, sync) VALUES ($1, $2, $3, 'QUEUED', $4)",
        values: [id, flowId, flowVersionId, sync],
      });
    },

    async markRunning(runId, workerId) {
      const result = await pool.query({
        ...named('runs-mark-running'),
        text: `UPDATE runs SET status = 'RUNNING', worker_id = $2, started_at = now(), attempts = attempts + 1
         WHERE id = $1 AND ${UNFINISHED}`,
        values: [runId, workerId],
      });
      return result.rowCount === 1;
    },

    async requeue(runId, error) {
      const result = await pool.query(
        `UPDATE runs SET status = 'QUEUED', error = $2, steps = '[]'::jsonb WHERE id = $1 AND ${UNFINISHED}`,
        [runId, jsonb(error)],
      );
      return result.rowCount === 1;
    },

    async finish(runId, { outcome, timings, provisioning }) {
      const { status, error, steps, logKey, logError } = outcome;
      // `before` locks the row and says whether it was final already; totalMs is measured on the
      // database's clock, like created_at, so the parts add up against it.
      const { rows } = await pool.query<{ finalised: boolean; total_ms: number | null }>({
        ...named('runs-finish'),
        text: `UPDATE runs r SET
           status = CASE WHEN before.open THEN $2 ELSE r.status END,
           error = CASE WHEN before.open THEN $3::jsonb ELSE r.error END,
           steps = CASE WHEN before.open THEN coalesce($4::jsonb, r.steps) ELSE r.steps END,
           log_key = CASE WHEN before.open THEN $5 ELSE r.log_key END,
           log_error = CASE WHEN before.open THEN $6::jsonb ELSE r.log_error END,
           finished_at = CASE WHEN before.open THEN now() ELSE r.finished_at END,
           timings = CASE WHEN $7::jsonb IS NULL THEN r.timings ELSE $7::jsonb || jsonb_build_object('totalMs',
             round(extract(epoch FROM (clock_timestamp() - r.created_at)) * 1000)) END,
           provisioning = coalesce($8::jsonb, r.provisioning)
         FROM (SELECT id, ${UNFINISHED} AS open FROM runs WHERE id = $1 FOR UPDATE) before
         WHERE r.id = before.id
         RETURNING before.open AS finalised, (r.timings->>'totalMs')::float8 AS total_ms`,
        values: [
          runId,
          status,
          jsonb(error),
          jsonb(steps),
          logKey ?? null,
          jsonb(logError),
          jsonb(timings),
          jsonb(provisioning),
        ],
      });
      const row = rows[0];
      // A run finished before (swept) has no timings of its own; these are only this call's.
      const totalMs = timings === undefined ? null : (row?.total_ms ?? null);
      return { finalised: row?.finalised === true, totalMs };
    },

    async get(runId) {
      const { rows } = await pool.query<Record<string, unknown>>('SELECT * FROM runs WHERE id = $1', [runId]);
      const row = rows[0];
      return row === undefined ? null : toRunRecord(row);
    },

    async sweepOverdue(deadlineSeconds, error) {
      const { rows } = await pool.query<{ id: string; flow_id: string }>(
        `UPDATE runs SET status = $3, error = $2, finished_at = now()
         WHERE status = 'RUNNING' AND started_at < now() - make_interval(secs => $1)
         RETURNING id, flow_id`,
        [deadlineSeconds, jsonb(error), runStatusOf(error.code)],
      );
      return rows.map((row) => ({ id: row.id, flowId: row.flow_id }));
    },

    page: (query) => queryRunPage(pool, query),

    stats: (query) => queryRunStats(pool, query),
  };
}
