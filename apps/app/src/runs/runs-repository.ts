import {
  FlowboxError,
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
import { queryRunPage, type RunPage, type RunPageQuery } from './run-page.ts';
import { type RunRecord, type RunSource, toRunRecord } from './run-record.ts';
import { queryRerunSource, queryReruns, type RerunSource } from './run-reruns.ts';
import {
  pruneScheduleTicks,
  pruneTombstones,
  queryRetentionBatch,
  type RemovedRun,
  removeRuns,
} from './run-retention-queries.ts';
import { queryRunStats, type RunStats, type RunStatsQuery } from './run-stats.ts';

export type { RunRecord, RunSource } from './run-record.ts';
export type { RerunSource } from './run-reruns.ts';
export type { RemovedRun } from './run-retention-queries.ts';

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
}

/** What the final write did: whether it finalised the run, and the run's totalMs when it has one. */
export interface FinishResult {
  finalised: boolean;
  /** Accepted → now on the database's clock; null when no timings came (the worker did not report). */
  totalMs: number | null;
}

/** What a webhook records of a run it accepts: all that enqueueing its job again needs. */
export interface NewRun {
  id: string;
  flowId: string;
  flowVersionId: string;
  sync: boolean;
  trigger: TriggerPayload;
  /** The app instance holding the sync caller's connection, or null for an async run. */
  syncInstanceId: string | null;
  /** The webhook's span, when the run is traced. */
  traceparent?: string | undefined;
  /** The run this one re-runs (`POST /v1/runs/:id/rerun`). */
  rerunOf?: string | undefined;
  /** What started the run; `webhook` when unset. */
  source?: RunSource | undefined;
  /**
   * The idle worker the run goes to as it is accepted (RunHandoff.reserve): the row is written
   * RUNNING, its first attempt started. Unset: QUEUED.
   */
  startedBy?: string | undefined;
}

/** An unfinished run as the reconciler reads it: enough to enqueue its job again. */
export interface UnfinishedRun {
  id: string;
  flowId: string;
  flowVersionId: string;
  trigger: TriggerPayload;
  syncInstanceId: string | null;
  traceparent: string | null;
  /** Starts so far. */
  attempts: number;
  createdAt: Date;
  /** Where the next page of `unfinishedSince` starts. */
  cursor: UnfinishedCursor;
}

export interface UnfinishedCursor {
  /** The timestamp as Postgres prints it: a Date would drop its microseconds. */
  at: string;
  id: string;
}

/** Per-flow bounds the run statements apply (FLOW_MAX_QUEUED_RUNS, FLOW_MAX_CONCURRENT_RUNS; 0: none). */
export interface FlowRunBounds {
  maxQueued: number;
  maxRunning: number;
}

/** Why `markRunning` did or did not start a run. */
export type StartResult =
  | 'started'
  /** The run is final already (its job came back after it ended, or its caller left). */
  | 'ended'
  /** Its flow has `maxRunning` runs running: the run stays QUEUED. */
  | 'busy';

export interface RunsRepository {
  /**
   * Creates a QUEUED run unless its flow has `maxQueued` runs waiting already (null: no run was
   * created). `rank` is one after the highest rank of its flow's runs still waiting (1: none waits),
   * counted in the same statement. Throws FLOW_NOT_FOUND, writing nothing, when the flow is
   * deleted: the statement checks, so a deletion on any app refuses new runs at once, whatever
   * a flow cache says.
   */
  create(input: NewRun): Promise<{ rank: number } | null>;
  markRunning(runId: string, workerId: string): Promise<StartResult>;
  /**
   * Ends a run that never started (QUEUED, no attempt yet) with `error`, in the status its code
   * has in the catalog; false when it had started or ended already.
   */
  abandon(runId: string, error: SerializedError): Promise<boolean>;
  /**
   * Puts a started run back in QUEUED for another attempt, keeping why the last one failed in
   * `error`; false when it is final already.
   */
  requeue(runId: string, error: SerializedError): Promise<boolean>;
  /**
   * Records a run's end in one statement. The first final state wins: when the run was final
   * already (the sweeper, a webhook that could not enqueue) its status, error, steps and log stay,
   * and only the timings, provisioning and isolation are added.
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
  /**
   * The reconciler's candidates, oldest first, at most `limit`: QUEUED runs accepted (or put
   * back) more than `olderThanSeconds` ago, or RUNNING runs started that long ago; the page after
   * `after`. Runs from before the trigger was kept (migration 0005) cannot be enqueued again and
   * are left out.
   */
  unfinishedSince(options: {
    status: 'QUEUED' | 'RUNNING';
    olderThanSeconds: number;
    limit: number;
    after?: UnfinishedCursor | undefined;
  }): Promise<UnfinishedRun[]>;
  /** The runs that re-run `runId`, oldest first. */
  rerunsOf(runId: string): Promise<string[]>;
  rerunSource(runId: string): Promise<RerunSource>;
  /**
   * Up to `limit` finished runs created more than `olderThanDays` ago, oldest first: what
   * retention deletes next. Reading first lets their S3 logs go before their rows.
   */
  retentionBatch(olderThanDays: number, limit: number): Promise<RemovedRun[]>;
  /** Deletes these runs, leaving a tombstone for each; returns how many rows went. */
  remove(runIds: readonly string[]): Promise<number>;
  /** Deletes tombstones older than `olderThanDays`; returns how many. */
  pruneTombstones(olderThanDays: number): Promise<number>;
  /** Deletes schedule ticks older than `olderThanDays`, each flow's latest kept; returns how many. */
  pruneScheduleTicks(olderThanDays: number): Promise<number>;
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
  options: { preparedStatements: boolean; bounds?: FlowRunBounds } = { preparedStatements: true },
): RunsRepository {
  const named = (name: string) => (options.preparedStatements ? { name } : {});
  const maxQueued = options.bounds?.maxQueued ?? 0;
  const maxRunning = options.bounds?.maxRunning ?? 0;
  return {
    async create({
      id,
      flowId,
      flowVersionId,
      sync,
      trigger,
      syncInstanceId,
      traceparent,
      rerunOf,
      startedBy,
      source,
    }) {
      // One round trip counts the flow's waiting runs (stopped at the bound, on the
      // (flow_id, status, …) index), refuses a deleted flow, and ranks the run after every run of
      // its flow still waiting. The rank only grows while the flow has runs waiting, so no run is
      // overtaken by a later one of its flow; it starts again at 1 once none waits. The bound
      // costs no statement and heals itself: it is the rows, which always reach a final state.
      // A run handed to an idle worker as it is accepted (`startedBy`) is written RUNNING, its
      // first attempt counted, as markRunning would have.
      const { rows } = await pool.query<{ live: boolean; rank: number | null }>({
        ...named('runs-create'),
        text: `WITH backlog AS (SELECT
           (SELECT count(*) FROM (SELECT 1 FROM runs WHERE flow_id = $2 AND status = 'QUEUED' LIMIT $5) q) AS queued,
           (SELECT coalesce(max(rank), 0) FROM runs WHERE flow_id = $2 AND status = 'QUEUED') AS last_rank),
         flow AS (SELECT EXISTS (SELECT 1 FROM flows WHERE id = $2 AND deleted_at IS NULL) AS live),
         created AS (
           INSERT INTO runs (id, flow_id, flow_version_id, status, sync, trigger, sync_instance_id, traceparent, rerun_of, rank,
             worker_id, started_at, attempts, source)
           SELECT $1, $2, $3, CASE WHEN $11::text IS NULL THEN 'QUEUED' ELSE 'RUNNING' END, $4, $7, $8, $9, $10,
             backlog.last_rank + 1, $11, CASE WHEN $11::text IS NULL THEN NULL ELSE now() END,
             CASE WHEN $11::text IS NULL THEN 0 ELSE 1 END, $12
           FROM backlog, flow
           WHERE flow.live AND ($6::int = 0 OR backlog.queued < $6)
           RETURNING rank)
         SELECT flow.live, (SELECT rank FROM created) AS rank FROM flow`,
        values: [
          id,
          flowId,
          flowVersionId,
          sync,
          maxQueued > 0 ? maxQueued : 1,
          maxQueued,
          jsonb(trigger),
          syncInstanceId,
          traceparent ?? null,
          rerunOf ?? null,
          startedBy ?? null,
          source ?? (rerunOf === undefined ? 'webhook' : 'rerun'),
        ],
      });
      const row = rows[0];
      if (row?.live !== true) throw new FlowboxError('FLOW_NOT_FOUND', `flow ${flowId} was deleted`);
      return row.rank === null ? null : { rank: row.rank };
    },

    async markRunning(runId, workerId) {
      if (maxRunning === 0) {
        const result = await pool.query({
          ...named('runs-mark-running'),
          text: `UPDATE runs SET status = 'RUNNING', worker_id = $2, started_at = now(), attempts = attempts + 1
           WHERE id = $1 AND ${UNFINISHED}`,
          values: [runId, workerId],
        });
        return result.rowCount === 1 ? 'started' : 'ended';
      }
      // The flow's running runs are counted in the same statement (read committed: apps starting
      // runs of one flow at the same instant may pass the bound by as many).
      const { rows } = await pool.query<{ open: boolean; started: boolean }>({
        ...named('runs-mark-running-bounded'),
        text: `WITH run AS (SELECT id, flow_id, ${UNFINISHED} AS open FROM runs WHERE id = $1),
           busy AS (SELECT count(*) AS n FROM (SELECT 1 FROM runs WHERE status = 'RUNNING'
             AND flow_id = (SELECT flow_id FROM run) AND id <> $1 LIMIT $3) b),
           started AS (UPDATE runs SET status = 'RUNNING', worker_id = $2, started_at = now(),
             attempts = attempts + 1
             WHERE id = $1 AND ${UNFINISHED} AND (SELECT n FROM busy) < $3 RETURNING id)
         SELECT run.open, EXISTS (SELECT 1 FROM started) AS started FROM run`,
        values: [runId, workerId, maxRunning],
      });
      const row = rows[0];
      if (row?.started === true) return 'started';
      return row?.open === true ? 'busy' : 'ended';
    },

    async abandon(runId, error) {
      const result = await pool.query(
        `UPDATE runs SET status = $3, error = $2, finished_at = now()
         WHERE id = $1 AND status = 'QUEUED' AND attempts = 0`,
        [runId, jsonb(error), runStatusOf(error.code)],
      );
      return result.rowCount === 1;
    },

    async requeue(runId, error) {
      const result = await pool.query(
        `UPDATE runs SET status = 'QUEUED', error = $2, steps = '[]'::jsonb WHERE id = $1 AND ${UNFINISHED}`,
        [runId, jsonb(error)],
      );
      return result.rowCount === 1;
    },

    async finish(runId, { outcome, timings, provisioning, isolation }) {
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
           provisioning = coalesce($8::jsonb, r.provisioning),
           isolation = coalesce($9, r.isolation)
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
          isolation ?? null,
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

    async unfinishedSince({ status, olderThanSeconds, limit, after }) {
      // QUEUED by created_at (runs_page_status); RUNNING by started_at (runs_running_started).
      const since = status === 'QUEUED' ? 'created_at' : 'started_at';
      const { rows } = await pool.query<UnfinishedRow>(
        `SELECT id, flow_id, flow_version_id, trigger, sync_instance_id, traceparent, attempts, created_at,
           ${since}::text AS at
         FROM runs
         WHERE status = $1 AND ${since} < now() - make_interval(secs => $2) AND trigger IS NOT NULL
           AND ($4::timestamptz IS NULL OR (${since}, id) > ($4, $5::uuid))
         ORDER BY ${since}, id LIMIT $3`,
        [status, olderThanSeconds, limit, after?.at ?? null, after?.id ?? null],
      );
      return rows.map((row) => ({
        id: row.id,
        flowId: row.flow_id,
        flowVersionId: row.flow_version_id,
        // Rows written before the trigger held the method and raw body read as a POST without one.
        trigger: TriggerPayloadSchema.parse(row.trigger),
        syncInstanceId: row.sync_instance_id,
        traceparent: row.traceparent,
        attempts: row.attempts,
        createdAt: row.created_at,
        cursor: { at: row.at, id: row.id },
      }));
    },

    rerunsOf: (runId) => queryReruns(pool, runId),
    rerunSource: (runId) => queryRerunSource(pool, runId),
    retentionBatch: (olderThanDays, limit) => queryRetentionBatch(pool, olderThanDays, limit),
    remove: (runIds) => removeRuns(pool, runIds),
    pruneTombstones: (olderThanDays) => pruneTombstones(pool, olderThanDays),
    pruneScheduleTicks: (olderThanDays) => pruneScheduleTicks(pool, olderThanDays),
    page: (query) => queryRunPage(pool, query),

    stats: (query) => queryRunStats(pool, query),
  };
}

interface UnfinishedRow {
  id: string;
  flow_id: string;
  flow_version_id: string;
  trigger: unknown;
  sync_instance_id: string | null;
  traceparent: string | null;
  attempts: number;
  created_at: Date;
  at: string;
}
