import type { JobProvisioning, JobTimings, RunStatus, SerializedError, StepResult } from '@flowbox/protocol';

/** A run as the API and the lifecycle read it. */
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
  /** How many times the run was started (more than 1 after a retry). */
  attempts: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

/** A row of `runs` as pg returns it. */
export interface RunRow {
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
  attempts: number;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export function toRunRecord(row: RunRow): RunRecord {
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
    attempts: row.attempts,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
