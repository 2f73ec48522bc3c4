import type {
  FinalRunStatus,
  LogPersisted,
  LogUpload,
  RunLog,
  SerializedError,
  StepResult,
} from '@flowbox/protocol';
import { serializeError } from '@flowbox/protocol';
import type { HttpClient } from '../host/http-client.ts';
import { uploadRunLog } from '../host/log-uploader.ts';
import type { RunTrace } from './run-trace.ts';

/** What a run's log says of its end. */
export interface RunEnd {
  status: FinalRunStatus;
  startedAt: Date;
  steps: StepResult[];
  error?: SerializedError | undefined;
  /** Steps whose input or output the log left out (log-budget.ts). */
  dropped?: number;
}

/** The run log (RunLogSchema) a run's end uploads: built here for the engine and the fleet simulator. */
export function buildRunLog(
  job: { runId: string; flowId: string; flowVersionId: string },
  end: RunEnd,
): RunLog {
  const log: RunLog = {
    version: 1,
    runId: job.runId,
    flowId: job.flowId,
    flowVersionId: job.flowVersionId,
    status: end.status,
    startedAt: end.startedAt.toISOString(),
    finishedAt: new Date().toISOString(),
    steps: end.steps,
  };
  if (end.error !== undefined) log.error = end.error;
  if (end.dropped !== undefined && end.dropped > 0) log.dropped = end.dropped;
  return log;
}

/** Where a run's log went: its key, or null with the upload's error (LOG_UPLOAD_FAILED). */
export interface PersistedLog {
  logKey: string | null;
  logError?: SerializedError;
  logPersistMs: number;
}

/** Uploads `log` through the job's presigned POST; a failed upload costs the log, not the run. */
export async function persistRunLog(
  http: HttpClient,
  upload: LogUpload,
  log: RunLog,
  timeoutMs: number,
): Promise<PersistedLog> {
  const started = performance.now();
  try {
    await uploadRunLog(http, upload, log, timeoutMs);
    return { logKey: upload.key, logPersistMs: performance.now() - started };
  } catch (error) {
    return {
      logKey: null,
      logError: serializeError(error, 'LOG_UPLOAD_FAILED'),
      logPersistMs: performance.now() - started,
    };
  }
}

/** How the upload that follows a run's outcome ended: the body of its `log-persisted`. */
export type LogPersistReport = Pick<LogPersisted, 'logKey' | 'logError' | 'logPersistMs' | 'spans'>;

/**
 * The upload after the run's outcome went to the worker (engine.ts sends the report), within
 * `timeoutMs`. A traced run gets its `log.upload` span, a child of its `engine.run`.
 */
export async function persistLogAfterOutcome(
  http: HttpClient,
  upload: LogUpload,
  log: RunLog,
  timeoutMs: number,
  trace: RunTrace | null,
): Promise<LogPersistReport> {
  const span = trace?.start('log.upload');
  const { logError, logPersistMs } = await persistRunLog(http, upload, log, timeoutMs);
  const report: LogPersistReport = { logKey: upload.key, logPersistMs };
  if (logError !== undefined) report.logError = logError;
  if (trace !== null && span !== undefined) {
    span.end(logError);
    // finish() again ends nothing more and returns every record, this span last.
    const spans = trace.finish().filter((record) => record.name === 'log.upload');
    if (spans.length > 0) report.spans = spans;
  }
  return report;
}
