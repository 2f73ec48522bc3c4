import {
  FlowboxError,
  formatIssues,
  type JobProvisioning,
  JobProvisioningSchema,
  type JobTimings,
  JobTimingsSchema,
  type RunIsolation,
  RunIsolationSchema,
  type RunStatus,
  RunStatusSchema,
  type SerializedError,
  SerializedErrorSchema,
  type StepResult,
  StepResultSchema,
} from '@flowbox/protocol';
import { z } from 'zod';

/** What started a run: its flow's webhook, a schedule tick, `POST /v1/flows/:id/runs`, a re-run, or a failed run's error flow. */
export const RunSourceSchema = z.enum(['webhook', 'schedule', 'manual', 'rerun', 'error_flow']);
export type RunSource = z.infer<typeof RunSourceSchema>;

/**
 * A row of `runs` as pg returns it. Its JSON columns were written from parsed messages, but
 * Postgres does not hold them to a schema: they are parsed here, where they leave it, so a
 * malformed row fails its read naming the run instead of a reader further on.
 */
const RunRowSchema = z.object({
  id: z.string(),
  flow_id: z.string(),
  flow_version_id: z.string(),
  status: RunStatusSchema,
  sync: z.boolean(),
  steps: z.array(StepResultSchema),
  error: SerializedErrorSchema.nullable(),
  log_key: z.string().nullable(),
  log_error: SerializedErrorSchema.nullable(),
  timings: JobTimingsSchema.extend({ totalMs: z.number() }).nullable(),
  provisioning: JobProvisioningSchema.nullable(),
  isolation: RunIsolationSchema.nullable(),
  worker_id: z.string().nullable(),
  attempts: z.number().int(),
  created_at: z.date(),
  started_at: z.date().nullable(),
  finished_at: z.date().nullable(),
  rerun_of: z.string().nullable(),
  source: RunSourceSchema,
  // Left out by the run list's SELECT.
  caused_by: z.string().nullable().default(null),
  resumes: z.number().int().default(0),
  paused_at: z.date().nullable().default(null),
  error_flow_skipped: z.string().nullable().default(null),
});

const RowIdSchema = z.object({ id: z.string() });

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
  /** How the worker kept the run apart from others; null until a worker reported it. */
  isolation: RunIsolation | null;
  workerId: string | null;
  /** How many times the run was started (more than 1 after a retry). */
  attempts: number;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
  /** The run this one re-runs, or null. */
  rerunOf: string | null;
  /** What started the run. */
  source: RunSource;
  /** For a run of an error flow: the failed run it reports. */
  causedBy: string | null;
  /** Why this failed run's error flow could not start (deleted, unpublished, disabled). */
  errorFlowSkipped: string | null;
  /** How many times the run resumed after a pause. */
  resumes: number;
  /** When it paused; null unless PAUSED. */
  pausedAt: Date | null;
}

/** Parses one `runs` row (every column, as `SELECT *` gives them) into its record. */
export function toRunRecord(row: unknown): RunRecord {
  const parsed = RunRowSchema.safeParse(row);
  if (!parsed.success) {
    const id = RowIdSchema.safeParse(row);
    throw new FlowboxError(
      'INTERNAL',
      `run ${id.success ? id.data.id : '(no id)'}: its row is malformed: ${formatIssues(parsed.error.issues)}`,
    );
  }
  const r = parsed.data;
  return {
    id: r.id,
    flowId: r.flow_id,
    flowVersionId: r.flow_version_id,
    status: r.status,
    sync: r.sync,
    steps: r.steps,
    error: r.error,
    logKey: r.log_key,
    logError: r.log_error,
    timings: r.timings,
    provisioning: r.provisioning,
    isolation: r.isolation,
    workerId: r.worker_id,
    attempts: r.attempts,
    createdAt: r.created_at,
    startedAt: r.started_at,
    finishedAt: r.finished_at,
    rerunOf: r.rerun_of,
    source: r.source,
    causedBy: r.caused_by,
    errorFlowSkipped: r.error_flow_skipped,
    resumes: r.resumes,
    pausedAt: r.paused_at,
  };
}
