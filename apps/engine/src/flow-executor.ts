import {
  type EngineJob,
  ERROR_CATALOG,
  type FinalRunStatus,
  type RunLog,
  type SerializedError,
  type StepResult,
  serializeError,
} from '@flowbox/protocol';
import { createAppClient } from './app-client.ts';
import type { CodeRunner } from './code-runner.ts';
import type { HttpClient } from './http-client.ts';
import type { EngineLog } from './ipc-channel.ts';
import { uploadRunLog } from './log-uploader.ts';
import type { PieceRegistry } from './piece-registry.ts';
import { createStepRunner } from './step-runner.ts';

export interface FlowExecutorDeps {
  pieces: PieceRegistry;
  codeRunner: CodeRunner;
  http: HttpClient;
  log: EngineLog;
  /** Per callback and for the log upload; the worker's flow timeout bounds the whole run. */
  httpTimeoutMs?: number;
}

export interface FlowOutcome {
  status: FinalRunStatus;
  error?: SerializedError;
  /** Where the run log was stored, or null when its upload failed. */
  logKey: string | null;
  /** runMs: the flow with its callbacks, without the log upload; logPersistMs: the upload. */
  timings: { runMs: number; logPersistMs: number };
}

export interface FlowExecutor {
  execute(job: EngineJob): Promise<FlowOutcome>;
}

const DEFAULT_HTTP_TIMEOUT_MS = 30_000;

export function createFlowExecutor(deps: FlowExecutorDeps): FlowExecutor {
  const timeoutMs = deps.httpTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  return {
    async execute(job) {
      const startedAt = new Date();
      const started = performance.now();
      const app = createAppClient({
        http: deps.http,
        appUrl: job.appUrl,
        engineToken: job.engineToken,
        runId: job.runId,
        timeoutMs,
      });
      const steps = createStepRunner(deps, job, (response) => app.reportResponse(response));
      const results: StepResult[] = [];
      let status: FinalRunStatus = 'SUCCEEDED';
      let error: SerializedError | undefined;

      try {
        const scope: Record<string, unknown> = {};
        const plan = [
          () => steps.runTrigger(),
          ...job.flow.steps.map((step) => () => steps.runStep(step, scope)),
        ];
        for (const runNext of plan) {
          const result = await runNext();
          results.push(result);
          await app.reportStep(result);
          if (result.error !== undefined) {
            error = result.error;
            // A system error inside a step (a failed response callback) is not the flow's fault.
            status = ERROR_CATALOG[error.code].family === 'system' ? 'INTERNAL_ERROR' : 'FAILED';
            break;
          }
          scope[result.name] = result.output;
        }
      } catch (callbackError) {
        status = 'INTERNAL_ERROR';
        error = serializeError(callbackError);
      }

      const runLog: RunLog = {
        version: 1,
        runId: job.runId,
        flowId: job.flowId,
        flowVersionId: job.flowVersionId,
        status,
        startedAt: startedAt.toISOString(),
        finishedAt: new Date().toISOString(),
        steps: results,
      };
      if (error !== undefined) runLog.error = error;

      const uploadStarted = performance.now();
      let logKey: string | null = job.logUpload.key;
      let logError: SerializedError | undefined;
      try {
        await uploadRunLog(deps.http, job.logUpload, runLog, timeoutMs);
      } catch (uploadError) {
        logKey = null;
        logError = serializeError(uploadError, 'LOG_UPLOAD_FAILED');
        deps.log('error', 'run log upload failed', { runId: job.runId, error: logError });
      }
      const logPersistMs = performance.now() - uploadStarted;

      try {
        const report: Parameters<typeof app.reportFinished>[0] = { status, logKey };
        if (error !== undefined) report.error = error;
        if (logError !== undefined) report.logError = logError;
        await app.reportFinished(report);
      } catch (callbackError) {
        // The app never heard the run end; the worker's job result carries this instead.
        status = 'INTERNAL_ERROR';
        error = serializeError(callbackError);
      }

      const runMs = Math.max(0, performance.now() - started - logPersistMs);
      const outcome: FlowOutcome = { status, logKey, timings: { runMs, logPersistMs } };
      if (error !== undefined) outcome.error = error;
      return outcome;
    },
  };
}
