import { createInputValidators } from '@flowbox/pieces-framework/validate';
import {
  type Checkpoint,
  CONNECTIONS_ROOT,
  DEFAULT_LOOP_MAX_ITERATIONS,
  ENGINE_PROGRESS_INTERVAL_MS,
  type EngineJob,
  type ExecuteResult,
  type FinalRunStatus,
  type FlowResponse,
  forUsers,
  type PreloadRequest,
  type RunOutcome,
  runStatusOf,
  type SerializedError,
  type StepResult,
  serializeError,
  type WaitPoint,
} from '@flowbox/protocol';
import { createAppClient } from '../host/app-client.ts';
import type { IsolatedRun } from '../isolate/run-isolation.ts';
import { durableDeps, pausedRun, readCheckpoint, storeCheckpoint } from './durable-run.ts';
import { primeAppConnection, primeCodeRunner } from './engine-priming.ts';
import type { FlowExecutorDeps } from './flow-executor-deps.ts';
import { createHostLeafExecutor } from './host-leaf-executor.ts';
import { interpretFlow } from './interpreter/interpreter.ts';
import type { StepSink } from './interpreter/interpreter-context.ts';
import type { LeafExecutor } from './interpreter/leaf-executor.ts';
import { createLogBudget } from './log-budget.ts';
import { createProgressReports } from './progress-reports.ts';
import { createRedactor } from './redactor.ts';
import { buildRunLog, type LogPersistReport, persistLogAfterOutcome } from './run-log.ts';
import { openIsolatedRun, prepareRun } from './run-preparation.ts';
import { type RunTrace, startRunTrace } from './run-trace.ts';
import { executeStepTest } from './step-test.ts';

/**
 * The run's outcome (every step that ran) and what the flow took; `persistLog` uploads the run
 * log the outcome names, once the outcome is on its way.
 */
export type FlowExecution = Pick<ExecuteResult, 'outcome' | 'timings' | 'spans'> & {
  persistLog?: () => Promise<LogPersistReport>;
};

export interface FlowExecutor {
  execute(job: EngineJob): Promise<FlowExecution>;
  /**
   * Imports pieces ahead of the job that will use them (a prewarmed engine). Never fails: a
   * piece that cannot load now fails the job that needs it, with the reason.
   */
  preload(preload: PreloadRequest): Promise<void>;
}

const DEFAULT_HTTP_TIMEOUT_MS = 30_000;
/** The log upload gives up this long before the flow timeout, leaving time to report. */
const UPLOAD_DEADLINE_MARGIN_MS = 1_000;

export function createFlowExecutor(deps: FlowExecutorDeps): FlowExecutor {
  const timeoutMs = deps.httpTimeoutMs ?? DEFAULT_HTTP_TIMEOUT_MS;
  // Compiled once per piece version, for the engine's life.
  const inputs = createInputValidators();
  return {
    async preload({ pieces, codeStepMemoryMb, appUrl }) {
      const started = performance.now();
      const settled = await Promise.allSettled(pieces.map((piece) => deps.pieces.load(piece)));
      for (const outcome of settled) {
        if (outcome.status === 'rejected') {
          deps.log('warn', 'could not preload a piece', { error: serializeError(outcome.reason) });
          continue;
        }
        // Each action's input check read ahead too, off the first run's path.
        const piece = outcome.value;
        for (const action of piece.actions.values()) inputs.prepare(`${piece.name}@${piece.version}`, action);
      }
      if (codeStepMemoryMb !== undefined) await primeCodeRunner(deps, codeStepMemoryMb);
      if (appUrl !== undefined) await primeAppConnection(deps, appUrl);
      const ms = Math.round(performance.now() - started);
      deps.log('debug', 'preloaded pieces', { pieces: pieces.map((p) => p.name), ms });
    },
    async execute(job) {
      if (job.test !== undefined) {
        return executeStepTest(job, job.test, {
          prepare: () => prepareRun(deps, job, inputs),
          openIsolated: (run) => openIsolatedRun(deps, job, run, async () => {}),
          log: deps.log,
        });
      }
      const startedAt = new Date();
      const started = performance.now();
      // An untraced run (no traceparent) records nothing and sends no traceparent header.
      const trace =
        job.traceparent === undefined
          ? null
          : startRunTrace(job.traceparent, { 'flowbox.run_id': job.runId, 'flowbox.flow_id': job.flowId });
      const app = (deps.appClient ?? createAppClient)({
        http: deps.http,
        appUrl: job.appUrl,
        engineToken: job.engineToken,
        runId: job.runId,
        timeoutMs,
        traceparent: trace?.traceparent,
      });
      const results: StepResult[] = [];
      const budget = createLogBudget(job.logUpload.maxBytes);
      const progress = createProgressReports(app, deps.progressIntervalMs ?? ENGINE_PROGRESS_INTERVAL_MS);
      let status: FinalRunStatus = 'SUCCEEDED';
      let error: SerializedError | undefined;
      let isolated: IsolatedRun | undefined;
      let leaves: LeafExecutor | undefined;
      let paused: { waits: WaitPoint[]; checkpoint: Checkpoint } | undefined;

      // Until the bundle names the signature header, only the connections and credential headers.
      let redactor = createRedactor({ connections: job.connections, trigger: job.trigger });
      try {
        const [run, resumed] = await Promise.all([
          prepareRun(deps, job, inputs),
          job.resume === undefined ? undefined : readCheckpoint(deps.http, job, timeoutMs),
        ]);
        const durable = durableDeps(deps.clock, job, app, resumed);
        const signatureHeader = run.bundle.definition.trigger.verify?.header;
        if (signatureHeader !== undefined) {
          redactor = createRedactor({ connections: job.connections, trigger: job.trigger, signatureHeader });
        }
        const shown = redactor;
        if (shown !== null) {
          run.log = (level, msg, data) => deps.log(level, shown.text(msg), shown.value(data));
        }
        // The caller may read the run as soon as it has its answer: the steps before the response
        // go with it, after any progress report still in flight, so they arrive once and in order.
        // With no step after it, the worker may ask for its next job while this run's tail runs.
        let stepsAfterThis = Number.POSITIVE_INFINITY;
        const respond = async (response: FlowResponse) =>
          app.reportResponse(response, await progress.takeForResponse(), stepsAfterThis === 0);
        isolated = await openIsolatedRun(deps, job, run, respond);
        leaves = isolated?.leaves ?? createHostLeafExecutor(run, job, respond);
        // The run's templates read the values; what leaves it is redacted (the sink).
        const scope: Record<string, unknown> =
          job.connections === undefined ? {} : { [CONNECTIONS_ROOT]: job.connections };
        const sink: StepSink = {
          beforeStep: () => progress.throwIfRefused(),
          position(after) {
            stepsAfterThis = after;
          },
          begin: (name, path, leaf) =>
            recordStep(leaf ? trace : null, name, path, (ran) => {
              const result = budget.fit(redactor === null ? ran : redactor.value(ran));
              results.push(result);
              progress.report(result);
              return result;
            }),
        };
        const ending = await interpretFlow(run.bundle.definition, scope, {
          leaves,
          sink,
          respond,
          limits: {
            codeStepTimeoutMs: job.limits.codeStepTimeoutMs,
            loopMaxIterations: job.limits.loopMaxIterations ?? DEFAULT_LOOP_MAX_ITERATIONS,
          },
          durable,
        });
        if (ending.kind === 'paused') {
          paused = pausedRun(job, ending.waits, durable, resumed);
        } else if (ending.kind !== 'done' && ending.error !== undefined) {
          error = redactor === null ? ending.error : redactor.value(ending.error);
          // A system error inside a step (a failed response callback) is not the flow's fault.
          status = runStatusOf(error.code);
        }
        await progress.settled();
      } catch (systemError) {
        // A callback the app refused, or a bundle or piece the worker's cache could not give.
        const serialized =
          redactor === null ? serializeError(systemError) : redactor.value(serializeError(systemError));
        deps.log('warn', 'the run failed outside its steps', { runId: job.runId, error: serialized });
        error = forUsers(serialized);
        status = runStatusOf(error.code);
        paused = undefined;
      } finally {
        // The run's context, its timers and whatever it left pending end with the run.
        leaves?.close?.();
        isolated?.close();
      }

      if (paused !== undefined) {
        const left = job.limits.flowTimeoutMs - (performance.now() - started) - UPLOAD_DEADLINE_MARGIN_MS;
        const stored = await storeCheckpoint(
          deps.http,
          job,
          paused.checkpoint,
          Math.max(1, Math.min(timeoutMs, left)),
        );
        if (stored.error === undefined) {
          // No log at a pause: the run's end writes it, with every step (replayed ones flagged).
          const outcome: RunOutcome = {
            status: 'PAUSED',
            steps: results,
            logKey: null,
            pause: { waits: paused.waits, checkpointKey: stored.key },
          };
          const runMs = Math.max(0, performance.now() - started - stored.ms);
          const execution: FlowExecution = { outcome, timings: { runMs, logPersistMs: stored.ms } };
          if (trace !== null) execution.spans = trace.finish(undefined);
          return execution;
        }
        deps.log('error', 'the run could not pause', { runId: job.runId, error: stored.error });
        error = stored.error;
        status = runStatusOf(error.code);
      }

      const runLog = buildRunLog(job, {
        status,
        startedAt,
        steps: results,
        error,
        dropped: budget.dropped(),
      });
      // The outcome goes now, naming where its log goes; the upload follows it (engine.ts), so
      // the worker's next job does not wait for S3. Within what is left of the flow timeout.
      const runMs = Math.max(0, performance.now() - started);
      const outcome: RunOutcome = { status, steps: results, logKey: job.logUpload.key };
      if (error !== undefined) outcome.error = error;
      const execution: FlowExecution = { outcome, timings: { runMs, logPersistMs: 0 } };
      if (trace !== null) execution.spans = trace.finish(error).slice();
      execution.persistLog = () => {
        const left = job.limits.flowTimeoutMs - (performance.now() - started) - UPLOAD_DEADLINE_MARGIN_MS;
        return persistLogAfterOutcome(
          deps.http,
          job.logUpload,
          runLog,
          Math.max(1, Math.min(timeoutMs, left)),
          trace,
        );
      };
      return execution;
    },
  };
}

/** A step's span (when the run is traced) from its start; the function records its result once it ended. */
function recordStep(
  trace: RunTrace | null,
  name: string,
  path: string,
  record: (ran: StepResult) => StepResult,
): (ran: StepResult) => void {
  const span = trace?.start(`step ${path}`, { 'flowbox.step': name });
  return (ran) => {
    const result = record(ran);
    span?.end(result.error, { 'flowbox.step.kind': result.kind });
  };
}
