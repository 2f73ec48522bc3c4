import type { Logger } from '@flowbox/node-kit';
import {
  type DispatchedJob,
  type EngineJob,
  type FinalRunStatus,
  FlowboxError,
  type JobResult,
  type SerializedError,
  serializeError,
} from '@flowbox/protocol';
import type { EngineProcess } from './engine-process.ts';
import type { EngineSupply } from './engine-supply.ts';

/** Runs dispatched jobs one at a time on an engine, enforcing the flow timeout. */
export interface JobRunner {
  run(job: DispatchedJob): Promise<JobResult>;
  /** The engine currently held (for logs and tests). */
  readonly enginePid: number | undefined;
  close(): Promise<void>;
}

export interface JobRunnerOptions {
  /** Passed to the engine as the base URL of its callbacks. */
  appUrl: string;
  workerId: string;
  logger: Logger;
  engines: EngineSupply;
}

interface Execution {
  status: FinalRunStatus;
  error?: SerializedError;
  runMs: number;
  logPersistMs: number;
  /** False when the engine must not take another job (it timed out or crashed). */
  reusable: boolean;
}

export function createJobRunner(options: JobRunnerOptions): JobRunner {
  const { engines } = options;
  let busy = false;

  const toEngineJob = (job: DispatchedJob): EngineJob => ({
    runId: job.runId,
    flowId: job.flowId,
    flowVersionId: job.flowVersionId,
    flow: job.flow,
    trigger: job.trigger,
    appUrl: options.appUrl,
    engineToken: job.engineToken,
    logUpload: job.logUpload,
    limits: job.limits,
  });

  const execute = async (engine: EngineProcess, job: DispatchedJob): Promise<Execution> => {
    const started = performance.now();
    let timedOut = false;
    // The engine cannot be trusted to stop itself (a stuck callback, a hostile step): kill it.
    const timer = setTimeout(() => {
      timedOut = true;
      void engine.kill();
    }, job.limits.flowTimeoutMs);
    try {
      const result = await engine.execute(toEngineJob(job));
      const execution: Execution = {
        status: result.status,
        runMs: result.timings.runMs,
        logPersistMs: result.timings.logPersistMs,
        reusable: !timedOut,
      };
      if (result.error !== undefined) execution.error = result.error;
      return execution;
    } catch (error) {
      const runMs = performance.now() - started;
      if (timedOut) {
        const timeout = new FlowboxError(
          'FLOW_TIMEOUT',
          `flow did not finish within ${job.limits.flowTimeoutMs} ms`,
        );
        return { status: 'TIMEOUT', error: serializeError(timeout), runMs, logPersistMs: 0, reusable: false };
      }
      return {
        status: 'FAILED',
        error: serializeError(error, 'ENGINE_CRASHED'),
        runMs,
        logPersistMs: 0,
        reusable: false,
      };
    } finally {
      clearTimeout(timer);
    }
  };

  return {
    async run(job) {
      if (busy) throw new FlowboxError('INTERNAL', 'the job runner runs one job at a time');
      busy = true;
      try {
        const received = performance.now();
        const queueMs = Math.max(0, Date.now() - job.acceptedAt);
        const logger = options.logger.child({ runId: job.runId, jobId: job.jobId });
        let bootMs = 0;
        let enginePid: number | undefined;
        let execution: Execution;
        try {
          const acquired = await engines.acquire();
          bootMs = acquired.bootMs;
          enginePid = acquired.engine.pid;
          execution = await execute(acquired.engine, job);
          await engines.release(acquired.engine, { reusable: execution.reusable });
        } catch (error) {
          // The engine failed to boot: no run happened.
          execution = {
            status: 'FAILED',
            error: serializeError(error, 'ENGINE_CRASHED'),
            runMs: 0,
            logPersistMs: 0,
            reusable: false,
          };
        }
        const timings = {
          queueMs,
          provisionMs: 0,
          bootMs,
          runMs: execution.runMs,
          logPersistMs: execution.logPersistMs,
          workerBusyMs: performance.now() - received,
        };
        const result: JobResult = {
          version: 1,
          type: 'job-result',
          workerId: options.workerId,
          jobId: job.jobId,
          runId: job.runId,
          status: execution.status,
          timings,
        };
        if (execution.error !== undefined) result.error = execution.error;
        logger.info(
          { status: result.status, errorCode: result.error?.code, enginePid, timings },
          'job finished',
        );
        return result;
      } finally {
        busy = false;
      }
    },
    get enginePid() {
      return engines.currentPid;
    },
    close: () => engines.close(),
  };
}
