import {
  runStatusOf,
  type SerializedError,
  type TriggerPayload,
  TriggerPayloadSchema,
} from '@flowbox/protocol';
import { jsonb } from '../db/jsonb.ts';
import type { Pool } from '../db/pool.ts';
import {
  createRun,
  createRunWithKey,
  findIdempotencyKey,
  type IdempotencyKey,
  type IdempotentCreate,
  type KeptAnswer,
  keepIdempotentAnswer,
  type NewIdempotencyKey,
  type NewRun,
  pruneIdempotencyKeys,
} from './run-create.ts';
import {
  type ErrorRun,
  type FinishResult,
  type FinishRunInput,
  finishRun,
  sweepOverdueRuns,
} from './run-finish.ts';
import { queryRunPage, type RunPage, type RunPageQuery } from './run-page.ts';
import { type RunRecord, toRunRecord } from './run-record.ts';
import {
  queryErrorRun,
  queryRerunSource,
  queryReruns,
  type RerunSource,
  type RerunVersion,
} from './run-reruns.ts';
import {
  pruneScheduleTicks,
  pruneTombstones,
  queryRetentionBatch,
  type RemovedRun,
  type RetentionCursor,
  removeRuns,
} from './run-retention-queries.ts';
import { markRunning, type StartResult } from './run-start.ts';
import { queryRunStats, type RunStats, type RunStatsQuery } from './run-stats.ts';
import { queryRunWaits, type RunWait } from './run-waits.ts';

export type {
  IdempotencyKey,
  IdempotentCreate,
  KeptAnswer,
  NewIdempotencyKey,
  NewRun,
} from './run-create.ts';
export type { ErrorRun, FinishResult, FinishRunInput } from './run-finish.ts';
export type { RunRecord, RunSource } from './run-record.ts';
export type { RerunSource, RerunVersion } from './run-reruns.ts';
export type { RemovedRun, RetentionCursor } from './run-retention-queries.ts';
export type { StartResult } from './run-start.ts';
export type { RunWait } from './run-waits.ts';

/** A final run's log upload that failed after its result (RunsRepository.recordLogFailure). */
export interface LogFailure {
  runId: string;
  logKey: string;
  /** The worker that ran it, as its row names it. */
  workerId: string;
  logError: SerializedError;
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
  /** Resumes so far: above 0, its job is the resume's (`resume:<runId>:<resumes>`). */
  resumes: number;
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

export interface RunsRepository {
  /**
   * Creates a QUEUED run unless its flow has `maxQueued` runs waiting already (null: no run was
   * created). `rank` is one after the highest rank of its flow's runs still waiting (1: none waits),
   * counted in the same statement. Throws FLOW_NOT_FOUND, writing nothing, when the flow is
   * deleted: the statement checks, so a deletion on any app refuses new runs at once, whatever
   * a flow cache says.
   */
  create(input: NewRun): Promise<{ rank: number } | null>;
  /**
   * As `create`, for a webhook with an `Idempotency-Key`: the key's row and the run are written
   * by one statement, and a live key of the flow makes it create nothing and name the key's run
   * (run-create.ts).
   */
  createWithKey(input: NewRun, key: NewIdempotencyKey): Promise<IdempotentCreate>;
  /** The live (unexpired) key of a flow, with its run and the answer kept for repeats. */
  idempotencyKey(flowId: string, key: string): Promise<IdempotencyKey | null>;
  /** Keeps a sync run's answer on its key, for the repeats that come after it. */
  keepAnswer(flowId: string, key: string, runId: string, answer: KeptAnswer): Promise<void>;
  /** Deletes up to `limit` expired keys; returns how many. */
  pruneIdempotencyKeys(limit: number): Promise<number>;
  /**
   * QUEUED (or RUNNING, a lost worker's retry) → RUNNING, counting the attempt. With `resume`
   * (the job's: 0 for a run's first start), only the job of the resume in force starts the run;
   * a resume's job also resumes the run PAUSED at the pause it was set for (run-start.ts).
   */
  markRunning(runId: string, workerId: string, resume?: number): Promise<StartResult>;
  /**
   * Ends a run that never started (QUEUED, no attempt yet, never resumed) with `error`, in the status its code
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
   * and only the timings, provisioning and isolation are added. A failed run's error flow run is
   * created in the same statement (run-finish.ts).
   */
  finish(runId: string, input: FinishRunInput): Promise<FinishResult>;
  /**
   * The log upload that followed a final run's result failed: its `logKey` goes (no log is
   * behind it) and `logError` says why. Only on the final run whose worker and log key these
   * are; false otherwise (retried, or another attempt's log).
   */
  recordLogFailure(failure: LogFailure): Promise<boolean>;
  get(runId: string): Promise<RunRecord | null>;
  /**
   * Finalises RUNNING runs started more than `deadlineSeconds` ago with `error`, in the status
   * its code gives (no worker reported them: their worker or app died). Returns their ids.
   */
  sweepOverdue(
    deadlineSeconds: number,
    error: SerializedError,
  ): Promise<Array<{ id: string; flowId: string; errorRun: ErrorRun | null; parentRunId: string | null }>>;
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
  /** A paused run's waiting points, by path. */
  waits(runId: string): Promise<RunWait[]>;
  /** The runs that re-run `runId`, oldest first. */
  rerunsOf(runId: string): Promise<string[]>;
  /** The run of its flow's error flow that `runId`'s failure started, if any. */
  errorRunOf(runId: string): Promise<string | null>;
  /** What a re-run on `version` (default: the run's own) starts from. */
  rerunSource(runId: string, version?: RerunVersion): Promise<RerunSource>;
  /**
   * The next `limit` runs created more than `olderThanDays` ago, oldest first, after `after`;
   * of those, the finished ones: what retention deletes next (`next`: where to read on from,
   * null when no older run is left). Reading first lets their S3 logs go before their rows.
   */
  retentionBatch(
    olderThanDays: number,
    limit: number,
    after?: RetentionCursor,
  ): Promise<{ runs: RemovedRun[]; next: RetentionCursor | null }>;
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
    create: (input) => createRun(pool, named, { maxQueued }, input),
    createWithKey: (input, key) => createRunWithKey(pool, named, { maxQueued }, input, key),
    idempotencyKey: (flowId, key) => findIdempotencyKey(pool, flowId, key),
    keepAnswer: (flowId, key, runId, answer) => keepIdempotentAnswer(pool, flowId, key, runId, answer),
    pruneIdempotencyKeys: (limit) => pruneIdempotencyKeys(pool, limit),

    markRunning: (runId, workerId, resume) => markRunning(pool, named, maxRunning, runId, workerId, resume),

    async abandon(runId, error) {
      const result = await pool.query(
        `UPDATE runs SET status = $3, error = $2, finished_at = now()
         WHERE id = $1 AND status = 'QUEUED' AND attempts = 0 AND resumes = 0`,
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

    finish: (runId, input) => finishRun(pool, named, runId, input),

    async recordLogFailure({ runId, logKey, workerId, logError }) {
      const result = await pool.query(
        `UPDATE runs SET log_key = NULL, log_error = $4
         WHERE id = $1 AND log_key = $2 AND worker_id = $3 AND NOT ${UNFINISHED}`,
        [runId, logKey, workerId, jsonb(logError)],
      );
      return result.rowCount === 1;
    },

    async get(runId) {
      const { rows } = await pool.query<Record<string, unknown>>('SELECT * FROM runs WHERE id = $1', [runId]);
      const row = rows[0];
      return row === undefined ? null : toRunRecord(row);
    },

    sweepOverdue: (deadlineSeconds, error) => sweepOverdueRuns(pool, deadlineSeconds, error),

    async unfinishedSince({ status, olderThanSeconds, limit, after }) {
      // QUEUED by created_at (runs_page_status); RUNNING by started_at (runs_running_started).
      const since = status === 'QUEUED' ? 'created_at' : 'started_at';
      const { rows } = await pool.query<UnfinishedRow>(
        `SELECT id, flow_id, flow_version_id, trigger, sync_instance_id, traceparent, attempts, resumes,
           created_at, ${since}::text AS at
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
        resumes: row.resumes,
        createdAt: row.created_at,
        cursor: { at: row.at, id: row.id },
      }));
    },

    waits: (runId) => queryRunWaits(pool, runId),
    rerunsOf: (runId) => queryReruns(pool, runId),
    errorRunOf: (runId) => queryErrorRun(pool, runId),
    rerunSource: (runId, version) => queryRerunSource(pool, runId, version),
    retentionBatch: (olderThanDays, limit, after) => queryRetentionBatch(pool, olderThanDays, limit, after),
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
  resumes: number;
  created_at: Date;
  at: string;
}
