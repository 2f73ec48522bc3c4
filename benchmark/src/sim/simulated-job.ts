import { setTimeout as sleep } from 'node:timers/promises';
import {
  buildRunLog,
  createIpcAppClient,
  type EngineIpcChannel,
  type HttpClient,
  persistRunLog,
} from '@flowbox/engine';
import {
  type DispatchedJob,
  type FlowResponse,
  type JobResult,
  type LogFailed,
  type RunOutcome,
  runStatusOf,
  type StepResult,
  serializeError,
} from '@flowbox/protocol';

/** What the app and S3 see of a simulated job: the benchmark flow's answer, callbacks and log. */
export interface SimulatedJobOptions {
  workerId: string;
  /** The flow's fixed service time: what the engine would have spent running it. */
  serviceMs: number;
  http: HttpClient;
  /** The worker's line for its engine's callbacks: its socket to the app (`forwardCallback`). */
  callbacks: Pick<EngineIpcChannel, 'call'>;
  /** Jobs this simulated engine has served, this one included (for the provisioning record). */
  jobsServed: () => number;
  callbackTimeoutMs?: number;
  /**
   * The run log's upload, which follows the result as a real engine's does: it is handed here
   * (to be awaited before the worker disconnects), and a failure goes to `reportLogFailure`.
   */
  afterResult(upload: Promise<void>): void;
  reportLogFailure(failure: LogFailed): void;
}

const RESPONSE: FlowResponse = {
  status: 200,
  headers: { 'content-type': 'application/json' },
  body: { result: 6 },
};

/**
 * Runs one dispatched job the way an engine would be seen from outside, without one: waits the
 * service time, sends the response callback with the job's engine token over the worker's
 * socket (as a real engine's worker forwards it), returns the job result the worker would send
 * and then uploads the run log through its presigned POST, as an engine does after its result.
 */
export async function runSimulatedJob(job: DispatchedJob, options: SimulatedJobOptions): Promise<JobResult> {
  const received = performance.now();
  const timeoutMs = options.callbackTimeoutMs ?? 10_000;
  const startedAt = new Date();
  await sleep(options.serviceMs);
  const steps = benchmarkSteps(startedAt, options.serviceMs);
  let status: RunOutcome['status'] = 'SUCCEEDED';
  let error: RunOutcome['error'];
  try {
    const app = createIpcAppClient(options.callbacks, {
      engineToken: job.engineToken,
      runId: job.runId,
      timeoutMs,
    });
    await app.reportResponse(RESPONSE, steps.slice(0, -1), true);
  } catch (caught) {
    error = serializeError(caught, 'CALLBACK_FAILED');
    status = runStatusOf(error.code);
  }
  const runMs = performance.now() - received;
  const log = buildRunLog(job, { status, startedAt, steps, error });
  const logKey = job.logUpload.key;
  options.afterResult(
    persistRunLog(options.http, job.logUpload, log, timeoutMs).then(({ logError }) => {
      if (logError === undefined) return;
      const { jobId, runId } = job;
      options.reportLogFailure({
        version: 1,
        type: 'log-failed',
        workerId: options.workerId,
        jobId,
        runId,
        logKey,
        logError,
      });
    }),
  );
  return {
    version: 1,
    type: 'job-result',
    workerId: options.workerId,
    jobId: job.jobId,
    runId: job.runId,
    outcome: {
      status,
      ...(error === undefined ? {} : { error }),
      steps,
      logKey,
    },
    timings: {
      queueMs: Math.max(0, Date.now() - job.acceptedAt - (performance.now() - received)),
      provisionMs: 0,
      bootMs: 0,
      runMs,
      logPersistMs: 0,
      workerBusyMs: performance.now() - received,
    },
    provisioning: {
      bundle: 'hit',
      pieceHits: job.pieces.length,
      pieceMisses: 0,
      engine: { pid: process.pid, jobsServed: options.jobsServed(), preBooted: true },
    },
  };
}

/** The four steps of the benchmark flow, as its engine reports them; the service time is the code step's. */
function benchmarkSteps(startedAt: Date, serviceMs: number): StepResult[] {
  const at = startedAt.toISOString();
  const step = (
    name: string,
    kind: string,
    input: unknown,
    output: unknown,
    durationMs: number,
  ): StepResult => ({
    name,
    kind,
    status: 'SUCCEEDED',
    input,
    output,
    startedAt: at,
    durationMs,
  });
  return [
    step('trigger', 'webhook/catch_webhook', {}, { a: 2, b: 3 }, 0),
    step('step_1', 'math-helper/addition_math', { a: 2, b: 3 }, { sum: 5 }, 0),
    step('step_2', 'code', { sum: 5 }, { result: 6 }, serviceMs),
    step('step_3', 'webhook/return_response', RESPONSE, RESPONSE, 0),
  ];
}
