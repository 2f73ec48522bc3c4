import type {
  FinalRunStatus,
  JobProvisioning,
  JobTimings,
  RunStatus,
  SerializedError,
  StepResult,
} from '@flowbox/protocol';
import type { Pool } from './pool.ts';

export interface RunRecord {
  id: string;
  flowId: string;
  flowVersionId: string;
  status: RunStatus;
  sync: boolean;
  steps: StepResult[];
  error: SerializedError | null;
  logKey: string | null;
  logError: SerializedError | null;
  timings: (JobTimings & { totalMs: number }) | null;
  provisioning: JobProvisioning | null;
  workerId: string | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface FinishRunInput {
  status: FinalRunStatus;
  error?: SerializedError | undefined;
  logKey?: string | null | undefined;
  logError?: SerializedError | undefined;
}

export interface RunsRepository {
  create(input: { id: string; flowId: string; flowVersionId: string; sync: boolean }): Promise<void>;
  markRunning(runId: string, workerId: string): Promise<boolean>;
  appendStep(runId: string, step: StepResult): Promise<boolean>;
  /** Finalises a run that is not final yet; false when it already was (the first final state wins). */
  finish(runId: string, input: FinishRunInput): Promise<boolean>;
  /** Stores the worker's latency anatomy; `totalMs` is accepted → now (the worker's result). */
  recordTimings(runId: string, timings: JobTimings, provisioning?: JobProvisioning): Promise<void>;
  get(runId: string): Promise<RunRecord | null>;
  /**
   * Finalises RUNNING runs started more than `deadlineSeconds` ago as TIMEOUT (no worker
   * reported them: their worker or app died). Returns their ids.
   */
  sweepOverdue(deadlineSeconds: number, error: SerializedError): Promise<string[]>;
  /** A flow's runs created at or after `since`, oldest first, without their steps. */
  list(query: { flowId: string; since: Date; limit: number }): Promise<Omit<RunRecord, 'steps'>[]>;
}

const UNFINISHED = "status IN ('QUEUED', 'RUNNING')";

interface RunRow {
  id: string;
  flow_id: string;
  flow_version_id: string;
  status: RunStatus;
  sync: boolean;
  steps: StepResult[];
  error: SerializedError | null;
  log_key: string | null;
  log_error: SerializedError | null;
  timings: (JobTimings & { totalMs: number }) | null;
  provisioning: JobProvisioning | null;
  worker_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export function createRunsRepository(pool: Pool): RunsRepository {
  return {
    async create({ id, flowId, flowVersionId, sync }) {
      await pool.query(
        "INSERT INTO runs (id, flow_id, flow_version_id, status, sync) VALUES ($1, $2, $3, 'QUEUED', $4)",
        [id, flowId, flowVersionId, sync],
      );
    },

    async markRunning(runId, workerId) {
      const result = await pool.query(
        `UPDATE runs SET status = 'RUNNING', worker_id = $2, started_at = now() WHERE id = $1 AND ${UNFINISHED}`,
        [runId, workerId],
      );
      return result.rowCount === 1;
    },

    async appendStep(runId, step) {
      const result = await pool.query(
        `UPDATE runs SET steps = steps || jsonb_build_array($2::jsonb) WHERE id = $1 AND ${UNFINISHED}`,
        [runId, JSON.stringify(step)],
      );
      return result.rowCount === 1;
    },

    async finish(runId, { status, error, logKey, logError }) {
      const result = await pool.query(
        `UPDATE runs SET status = $2, error = $3, log_key = $4, log_error = $5, finished_at = now()
         WHERE id = $1 AND ${UNFINISHED}`,
        [
          runId,
          status,
          error === undefined ? null : JSON.stringify(error),
          logKey ?? null,
          logError === undefined ? null : JSON.stringify(logError),
        ],
      );
      return result.rowCount === 1;
    },

    async recordTimings(runId, timings, provisioning) {
      // totalMs on the database's clock, like created_at, so the parts add up against it.
      await pool.query(
        `UPDATE runs SET provisioning = $3, timings = $2::jsonb || jsonb_build_object('totalMs',
           round(extract(epoch FROM (clock_timestamp() - created_at)) * 1000))
         WHERE id = $1`,
        [runId, JSON.stringify(timings), provisioning === undefined ? null : JSON.stringify(provisioning)],
      );
    },

    async get(runId) {
      const { rows } = await pool.query<RunRow>('SELECT * FROM runs WHERE id = $1', [runId]);
      const row = rows[0];
      return row === undefined ? null : toRecord(row);
    },

    async sweepOverdue(deadlineSeconds, error) {
      const { rows } = await pool.query<{ id: string }>(
        `UPDATE runs SET status = 'TIMEOUT', error = $2, finished_at = now()
         WHERE status = 'RUNNING' AND started_at < now() - make_interval(secs => $1)
         RETURNING id`,
        [deadlineSeconds, JSON.stringify(error)],
      );
      return rows.map((row) => row.id);
    },

    async list({ flowId, since, limit }) {
      const { rows } = await pool.query<RunRow>(
        `SELECT id, flow_id, flow_version_id, status, sync, '[]'::jsonb AS steps, error, log_key, log_error, timings,
                provisioning, worker_id, created_at, started_at, finished_at
         FROM runs WHERE flow_id = $1 AND created_at >= $2 ORDER BY created_at, id LIMIT $3`,
        [flowId, since, limit],
      );
      return rows.map((row) => {
        const { steps: _steps, ...rest } = toRecord(row);
        return rest;
      });
    },
  };
}

function toRecord(row: RunRow): RunRecord {
  return {
    id: row.id,
    flowId: row.flow_id,
    flowVersionId: row.flow_version_id,
    status: row.status,
    sync: row.sync,
    steps: row.steps,
    error: row.error,
    logKey: row.log_key,
    logError: row.log_error,
    timings: row.timings,
    provisioning: row.provisioning,
    workerId: row.worker_id,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
