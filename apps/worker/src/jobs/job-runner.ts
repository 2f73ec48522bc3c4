import type { Logger } from '@flowbox/node-kit';
import {
  type DispatchedJob,
  type EgressPolicy,
  type EngineJob,
  type ExecutionMode,
  type FetchLimits,
  FlowboxError,
  failedOutcome,
  forUsers,
  isRetryable,
  type JobProvisioning,
  type JobResult,
  type JobTimings,
  type LogFailed,
  type LogPersisted,
  type RunIsolation,
  type RunOutcome,
  type SerializedError,
  type SpanRecord,
  serializeError,
} from '@flowbox/protocol';
import { epochMs, type Tracer } from '@flowbox/tracing';
import type { EngineProcess } from '../engines/engine-process.ts';
import type { AcquiredEngine, EngineSupply } from '../engines/engine-supply.ts';
import type { Provisioned, Provisioner } from '../engines/provisioner.ts';
import { type ForwardCallback, forwardingFor } from './callback-forwarding.ts';
import { type JobTrace, startJobTrace } from './job-trace.ts';
import { runIsolationFor } from './run-isolation.ts';

/** Runs dispatched jobs one at a time: provision, get an engine, execute under the flow timeout. */
export interface JobRunner {
  run(job: DispatchedJob): Promise<JobResult>;
  /** The engine currently held (for logs and tests). */
  readonly enginePid: number | undefined;
  /** Resolves once every log upload that followed a result has ended (and reported a failure). */
  logsSettled(): Promise<void>;
  close(): Promise<void>;
}

export interface JobRunnerOptions {
  /** Passed to the engine as the base URL of its callbacks. */
  appUrl: string;
  workerId: string;
  executionMode: ExecutionMode;
  /**
   * RUN_ISOLATION. `isolate`: each job runs in a fresh context inside its (reused) engine, except
   * a job whose flow needs Node (run-isolation.ts), which gets an engine from `freshEngines`.
   */
  isolation: RunIsolation;
  /** RUN_ISOLATION=isolate: engines that never ran another job, one per job whose flow needs Node. */
  freshEngines?: EngineSupply | undefined;
  /** ISOLATE_MAX_RUNS: the runs one isolate of the engine serves, each in a fresh context. */
  isolateMaxRuns?: number;
  /** Which hosts code steps and pieces may call (EGRESS), handed to the engine with each job. */
  egress: EgressPolicy;
  /** How much one run's `fetch` calls may hold (CODE_STEP_FETCH_*). */
  fetchLimits: FetchLimits;
  logger: Logger;
  provisioner: Provisioner;
  engines: EngineSupply;
  /** Null when tracing is off. */
  tracer?: Tracer | null;
  /** Where the engine's callbacks go: the app, over the worker's socket (app-connection.ts). */
  forwardCallback: ForwardCallback;
  /**
   * A run's log upload, which its engine goes on with after the job's result, failed: the app
   * is told behind that result (app-connection.ts).
   */
  reportLogFailure?: (failure: LogFailed) => void;
}

/** The run's outcome (steps empty when the engine crashed or timed out before saying), and its cost. */
interface Execution {
  outcome: RunOutcome;
  runMs: number;
  logPersistMs: number;
  /** False when the engine must not take another job (it timed out or crashed). */
  reusable: boolean;
  /** What the engine recorded of a traced run. */
  spans?: SpanRecord[] | undefined;
  /** How the log upload that follows the result ended, when the engine goes on with one. */
  persisted?: Promise<LogPersisted> | undefined;
}

interface Attempt {
  isolation: RunIsolation;
  execution: Execution;
  provisioned?: Provisioned;
  acquired?: AcquiredEngine;
  /** Time spent before provisioning failed (its parts are only known when it succeeds). */
  failedProvisionMs?: number;
}

/**
 * A run that never reached an engine (or lost it): its status is the one its error gives; the
 * error's stack is the worker's own, not shown.
 */
const notRun = (error: SerializedError): Execution => ({
  outcome: failedOutcome(forUsers(error)),
  runMs: 0,
  logPersistMs: 0,
  reusable: false,
});

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { engines, provisioner } = options;
  let busy = false;
  /** Log uploads still in flight after their jobs' results. */
  const uploads = new Set<Promise<void>>();
  // The supply of the job in progress (or the last one), for enginePid.
  let holding: EngineSupply = engines;

  /** Where a job of this isolation gets its engine: a fresh one when an isolate worker falls back. */
  const supplyFor = (isolation: RunIsolation): EngineSupply => {
    if (isolation !== 'process' || options.isolation !== 'isolate') return engines;
    if (options.freshEngines === undefined) {
      throw new FlowboxError('INTERNAL', 'RUN_ISOLATION=isolate needs a supply of fresh engines');
    }
    return options.freshEngines;
  };

  const toEngineJob = (job: DispatchedJob, provisioned: Provisioned, isolation: RunIsolation): EngineJob => ({
    runId: job.runId,
    // Memory only: passed on over IPC, never written to the cache or logged.
    ...(job.connections === undefined ? {} : { connections: job.connections }),
    flowId: job.flowId,
    flowVersionId: job.flowVersionId,
    bundlePath: provisioned.bundlePath,
    pieces: provisioned.pieces,
    executionMode: options.executionMode,
    ...(isolation === 'isolate' ? { isolation } : {}),
    ...(isolation === 'isolate' && options.isolateMaxRuns !== undefined
      ? { isolateMaxRuns: options.isolateMaxRuns }
      : {}),
    trigger: job.trigger,
    appUrl: options.appUrl,
    engineToken: job.engineToken,
    logUpload: job.logUpload,
    ...(job.checkpointUpload === undefined ? {} : { checkpointUpload: job.checkpointUpload }),
    ...(job.resume === undefined ? {} : { resume: job.resume }),
    ...(job.waitUrls === undefined ? {} : { waitUrls: job.waitUrls }),
    limits: job.limits,
    egress: options.egress,
    fetchLimits: options.fetchLimits,
    ...(job.test === undefined ? {} : { test: job.test }),
  });

  const execute = async (
    engine: EngineProcess,
    engineJob: EngineJob,
    forward: ForwardCallback,
  ): Promise<Execution> => {
    const started = performance.now();
    const { flowTimeoutMs } = engineJob.limits;
    let timedOut = false;
    // The engine cannot be trusted to stop itself (a stuck callback, a hostile step): kill it.
    const timer = setTimeout(() => {
      timedOut = true;
      void engine.kill();
    }, flowTimeoutMs);
    try {
      const { outcome, timings, spans, persisted } = await engine.execute(engineJob, forward);
      return { outcome, ...timings, reusable: !timedOut, spans, persisted };
    } catch (error) {
      const runMs = performance.now() - started;
      if (timedOut) {
        const timeout = new FlowboxError('FLOW_TIMEOUT', `flow did not finish within ${flowTimeoutMs} ms`);
        return { ...notRun(serializeError(timeout)), runMs };
      }
      return { ...notRun(serializeError(error, 'ENGINE_CRASHED')), runMs };
    } finally {
      clearTimeout(timer);
    }
  };

  /** Provision, acquire, execute, release: each stage runs only if the one before succeeded. */
  const attempt = async (job: DispatchedJob, trace: JobTrace | null): Promise<Attempt> => {
    const isolation = runIsolationFor(options.isolation, job);
    let provisioned: Provisioned;
    const provisionStarted = performance.now();
    const provisionSpan = trace?.child('provision');
    try {
      provisioned = await provisioner.provision(job);
    } catch (error) {
      // Nothing ran: a system failure (a tampered or unreachable artifact), not the flow's.
      const failure = serializeError(error, 'PROVISION_FAILED');
      provisionSpan?.fail(failure);
      provisionSpan?.end();
      return {
        isolation,
        execution: notRun(failure),
        failedProvisionMs: performance.now() - provisionStarted,
      };
    }
    provisionSpan?.setAttribute('flowbox.bundle', provisioned.bundle);
    provisionSpan?.setAttribute('flowbox.piece_misses', provisioned.pieceMisses);
    provisionSpan?.end();
    const first = await runIn(job, provisioned, isolation, trace);
    if (!refusedByIsolate(isolation, first.execution) || options.freshEngines === undefined) {
      return { isolation, provisioned, ...first };
    }
    // A piece the registry did not see as needing Node (its module's form) and the isolate
    // refused before any step ran: nothing reached the app, so the job runs again, once, in a
    // fresh engine process. Its log goes to the same key: the refused run's upload ends first.
    await first.execution.persisted;
    options.logger.info(
      { runId: job.runId, reason: first.execution.outcome.error?.message },
      "the run's isolate refused a piece; running the job in a fresh engine process",
    );
    return { isolation: 'process', provisioned, ...(await runIn(job, provisioned, 'process', trace)) };
  };

  /** Acquire an engine for the isolation, execute, release. */
  const runIn = async (
    job: DispatchedJob,
    provisioned: Provisioned,
    isolation: RunIsolation,
    trace: JobTrace | null,
  ): Promise<{ execution: Execution; acquired?: AcquiredEngine }> => {
    let acquired: AcquiredEngine;
    const acquireStartedMs = trace === null ? 0 : epochMs();
    let supply: EngineSupply;
    try {
      supply = supplyFor(isolation);
      holding = supply;
      acquired = await supply.acquire({
        pieces: provisioned.pieces,
        codeStepMemoryMb: job.limits.codeStepMemoryMb,
        appUrl: options.appUrl,
        ...(isolation === 'isolate' ? { isolation } : {}),
        ...(isolation === 'isolate' && options.isolateMaxRuns !== undefined
          ? { isolateMaxRuns: options.isolateMaxRuns }
          : {}),
      });
    } catch (error) {
      const failure = serializeError(error, 'ENGINE_CRASHED');
      const boot = trace?.child('engine.boot', { startMs: acquireStartedMs });
      boot?.fail(failure);
      boot?.end();
      return { execution: notRun(failure) };
    }
    // A boot the job waited for (none when the engine was reused or booted ahead).
    if (trace !== null && acquired.bootMs > 0) {
      const now = epochMs();
      trace.child('engine.boot', { startMs: now - acquired.bootMs }).end(now);
    }
    const engineJob = toEngineJob(job, provisioned, isolation);
    if (trace !== null) engineJob.traceparent = trace.traceparent;
    const forward = forwardingFor(job, options.forwardCallback);
    const execution = await execute(acquired.engine, engineJob, forward);
    await supply.release(acquired.engine, { reusable: execution.reusable });
    // A fresh engine is gone with its job: the one kept is the reused one.
    holding = engines;
    trace?.engineSpans(execution.spans);
    return { execution, acquired };
  };

  const runJob = async (job: DispatchedJob): Promise<JobResult> => {
    const received = performance.now();
    const queueMs = Math.max(0, Date.now() - job.acceptedAt);
    const trace = startJobTrace(options.tracer ?? null, job, options.workerId, options.logger);
    const { isolation, execution, provisioned, acquired, failedProvisionMs } = await attempt(job, trace);
    const { outcome, runMs, logPersistMs } = execution;
    const parts = provisioned?.timings;
    const timings: JobTimings = {
      queueMs,
      provisionMs:
        parts === undefined ? (failedProvisionMs ?? 0) : parts.bundleMs + parts.piecesMs + parts.engineMs,
      ...(parts === undefined ? {} : { provision: parts }),
      bootMs: acquired?.bootMs ?? 0,
      runMs,
      logPersistMs,
      workerBusyMs: performance.now() - received,
    };
    const result: JobResult = {
      version: 1,
      type: 'job-result',
      workerId: options.workerId,
      jobId: job.jobId,
      runId: job.runId,
      outcome,
      timings,
      isolation,
    };
    if (provisioned !== undefined && acquired !== undefined) {
      result.provisioning = describeProvisioning(provisioned, acquired);
    }
    if (trace !== null) {
      result.traceparent = trace.traceparent;
      trace.end(outcome);
    }
    if (execution.persisted !== undefined) {
      const ended = execution.persisted.then((persisted) => logPersisted(job, outcome, persisted, trace));
      uploads.add(ended);
      void ended.finally(() => uploads.delete(ended));
    }
    // The one line per job: the latency anatomy, for logs and the benchmark.
    options.logger.info(
      {
        runId: job.runId,
        jobId: job.jobId,
        status: outcome.status,
        errorCode: outcome.error?.code,
        timings,
        provisioning: result.provisioning,
        isolation,
      },
      'job finished',
    );
    return result;
  };

  /** The end of a log upload that followed the job's result: one line, and the app told of a failure. */
  const logPersisted = (
    job: DispatchedJob,
    outcome: RunOutcome,
    ended: LogPersisted,
    trace: JobTrace | null,
  ): void => {
    const { runId, jobId } = job;
    // The upload's span hangs from the engine.run exported with the result.
    trace?.engineSpans(ended.spans, ended.spans?.[0]?.parentSpanId);
    const { logKey, logError, logPersistMs } = ended;
    if (logError === undefined) {
      options.logger.debug({ runId, jobId, logPersistMs }, 'run log stored');
      return;
    }
    options.logger.warn({ runId, jobId, logPersistMs, logError }, 'run log upload failed');
    // A retryable outcome's run is likely run again, its next attempt writing this key anew: a
    // late failure must not clear that attempt's log. Should none follow, the key names no log.
    if (outcome.error !== undefined && isRetryable(outcome.error.code)) return;
    options.reportLogFailure?.({
      version: 1,
      type: 'log-failed',
      workerId: options.workerId,
      jobId,
      runId,
      logKey,
      logError,
    });
  };

  return {
    async run(job) {
      if (busy) throw new FlowboxError('INTERNAL', 'the job runner runs one job at a time');
      busy = true;
      try {
        return await runJob(job);
      } finally {
        busy = false;
      }
    },
    get enginePid() {
      return holding.currentPid;
    },
    async logsSettled() {
      await Promise.all(uploads);
    },
    async close() {
      await Promise.all([engines.close(), options.freshEngines?.close()]);
    },
  };
}

/** The isolate refused one of the run's pieces before any step ran (PIECE_NOT_ISOLATABLE). */
function refusedByIsolate(isolation: RunIsolation, execution: Execution): boolean {
  const { outcome } = execution;
  return (
    isolation === 'isolate' && outcome.error?.code === 'PIECE_NOT_ISOLATABLE' && outcome.steps.length === 0
  );
}

function describeProvisioning(provisioned: Provisioned, acquired: AcquiredEngine): JobProvisioning {
  return {
    bundle: provisioned.bundle,
    pieceHits: provisioned.pieceHits,
    pieceMisses: provisioned.pieceMisses,
    engine: {
      pid: acquired.engine.pid,
      jobsServed: acquired.engine.jobsServed,
      preBooted: acquired.preBooted,
    },
  };
}
