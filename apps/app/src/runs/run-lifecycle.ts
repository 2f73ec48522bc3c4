import type { Logger } from '@flowbox/node-kit';
import {
  type FinalRunStatus,
  type FlowResponse,
  FlowResponseSchema,
  failedOutcome,
  isRetryable,
  type JobProvisioning,
  type JobTimings,
  type RunIsolation,
  type RunJobData,
  type RunOutcome,
  type RunPause,
  runStatusOf,
  type SerializedError,
  type StepResult,
} from '@flowbox/protocol';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import type { SyncResponseHub } from '../sync/sync-response-hub.ts';
import type { EndedRuns } from './ended-runs.ts';
import type { RunProgressStore } from './run-progress-store.ts';
import { acceptPause } from './run-resumer.ts';
import type {
  ErrorRun,
  FinishResult,
  IdempotentCreate,
  LogFailure,
  NewIdempotencyKey,
  NewRun,
  RunsRepository,
  StartResult,
} from './runs-repository.ts';

/** Where a failed run's error flow run goes once the final write created it (RunQueue). */
export interface ErrorRunQueue {
  add(data: RunJobData, rank?: number): Promise<void>;
}

/** Where a PAUSED outcome is recorded (RunResumer.pause): false when the run was not RUNNING. */
export interface RunPauses {
  pause(runId: string, steps: readonly StepResult[], pause: RunPause): Promise<boolean>;
}

/**
 * A run's outcome as its worker forwarded it, with what the worker measured: what the final write
 * records. A JobResult is one.
 */
export interface RunConclusion {
  outcome: RunOutcome;
  timings?: JobTimings | undefined;
  provisioning?: JobProvisioning | undefined;
  /** How the worker kept the run apart from others. */
  isolation?: RunIsolation | undefined;
}

/** Which run an attempt belongs to. */
export interface RunAttempt {
  runId: string;
  flowId: string;
  /** The app instance holding the sync caller's connection, or null for an async run. */
  syncInstanceId: string | null;
  /** 1 for the first attempt. */
  attempt: number;
}

/**
 * What to do with an attempt's outcome: start the run again (a retryable failure with attempts
 * left) or record it as final. Pure: the lifecycle applies it.
 */
export function decideConclusion(
  outcome: Pick<RunOutcome, 'error'>,
  attempt: number,
  maxAttempts: number,
): 'retry' | 'final' {
  const retryable = outcome.error !== undefined && isRetryable(outcome.error.code);
  return retryable && attempt < maxAttempts ? 'retry' : 'final';
}

export type ConcludeResult =
  /** Back to QUEUED for another attempt; the job goes back to the queue. */
  | 'retried'
  /** This call wrote the run's final state. */
  | 'finished'
  /** The run paused (RUNNING → PAUSED): its job is done, a resume job goes on from its checkpoint. */
  | 'paused'
  /** The run was final already (swept, or never enqueued): the first final state stands. */
  | 'already-final';

/**
 * The one owner of a run's states: `QUEUED → RUNNING → SUCCEEDED | FAILED | TIMEOUT |
 * INTERNAL_ERROR`, `RUNNING → QUEUED` for a retry, `RUNNING → PAUSED` for a run that waits (its
 * way back is its due resume job's start, PAUSED → RUNNING, or RunResumer.resume, PAUSED →
 * QUEUED, for an answer), and `QUEUED → FAILED` for a sync run whose
 * caller left before it started. Every transition goes through here; the
 * first final state wins (the repository's conditional update), whether the worker's result, a
 * lost worker, a webhook that could not enqueue or the sweeper gets there first; a waiting sync
 * caller hears of the end from here, once.
 */
export class RunLifecycle {
  readonly #runs: RunsRepository;
  readonly #ended: EndedRuns;
  readonly #progress: RunProgressStore;
  readonly #hub: SyncResponseHub;
  readonly #queue: ErrorRunQueue;
  readonly #maxAttempts: number;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #pauses: RunPauses | undefined;
  readonly #childEnded: ChildEnded | undefined;

  constructor(deps: {
    runs: RunsRepository;
    ended: EndedRuns;
    progress: RunProgressStore;
    hub: SyncResponseHub;
    /** For the runs of error flows (`onFailure`) that final writes start. */
    queue: ErrorRunQueue;
    maxAttempts: number;
    metrics: AppMetrics;
    logger: Logger;
    /** Records PAUSED outcomes (RunResumer); without it a pause ends the run INTERNAL_ERROR. */
    pauses?: RunPauses | undefined;
    /** A sub-flow's run ended: its parent's waiting step is answered (waits/subflow-end.ts). */
    childEnded?: ChildEnded;
  }) {
    this.#pauses = deps.pauses;
    this.#childEnded = deps.childEnded;
    this.#queue = deps.queue;
    this.#metrics = deps.metrics;
    this.#runs = deps.runs;
    this.#ended = deps.ended;
    this.#progress = deps.progress;
    this.#hub = deps.hub;
    this.#maxAttempts = deps.maxAttempts;
    this.#logger = deps.logger;
  }

  /**
   * → QUEUED: a webhook (or a re-run) accepted the run. Null when its flow has
   * FLOW_MAX_QUEUED_RUNS waiting (no run was created); else the run's rank in its flow's queue
   * (its job's priority). Throws FLOW_NOT_FOUND when the flow is deleted (no run).
   */
  async accept(run: NewRun): Promise<{ rank: number } | null> {
    const created = await this.#runs.create(run);
    if (created !== null) this.#metrics.runAccepted();
    return created;
  }

  /**
   * → QUEUED as `accept`, for a webhook with an `Idempotency-Key`: nothing is created while the
   * key is live (its run is named instead).
   */
  async acceptWithKey(run: NewRun, key: NewIdempotencyKey): Promise<IdempotentCreate> {
    const created = await this.#runs.createWithKey(run, key);
    if (created.kind === 'created') this.#metrics.runAccepted();
    return created;
  }

  /**
   * QUEUED → RUNNING for a worker, or PAUSED → RUNNING (`resumed`) for the due resume job of the
   * pause in force: `ended` when the run has ended already (its job came back, or its caller
   * left), `busy` when its flow runs FLOW_MAX_CONCURRENT_RUNS already, `paused` or `superseded`
   * for a job of another pause (`resume`: the job's, 0 for a first start).
   */
  async start(runId: string, workerId: string, resume?: number): Promise<StartResult> {
    const started = await this.#runs.markRunning(runId, workerId, resume);
    // A pause's delayed resume job came due: its timer fired.
    if (started === 'resumed') this.#metrics.runResumed('timer');
    return started;
  }

  /**
   * QUEUED → FAILED `CALLER_GONE`: the sync caller left (answered 504, or disconnected) before
   * the run's first start, so nobody would get its answer. A run that started (even once, and
   * now waits for a retry) goes on. True when this call ended the run.
   */
  async callerGone(runId: string, why: string): Promise<boolean> {
    const ended = await this.#runs.abandon(runId, {
      name: 'CallerGone',
      code: 'CALLER_GONE',
      message: `the caller ${why} before the run started; it was not run (set runWhenCallerGone on the flow to run it anyway)`,
    });
    if (ended) this.#metrics.runFinished(runStatusOf('CALLER_GONE'));
    return ended;
  }

  /** QUEUED → final (INTERNAL_ERROR): an accepted run whose job could not be enqueued ends saying why. */
  async failUnqueued(run: { id: string; flowId: string }, error: SerializedError): Promise<void> {
    const outcome = failedOutcome(error);
    const finished = await this.#runs.finish(run.id, { outcome });
    if (finished.finalised) {
      this.#metrics.runFinished(outcome.status);
      await this.#startErrorFlow(run.id, finished);
      await this.#answerParent(run.id, finished.parentRunId, { status: outcome.status, error }, null);
    }
  }

  /**
   * An attempt's end, from its worker's result: another attempt when the failure is retryable
   * and attempts are left, the final state otherwise.
   */
  async conclude(run: RunAttempt, given: RunConclusion): Promise<ConcludeResult> {
    let conclusion: RunConclusion & { outcome: { status: FinalRunStatus } };
    if (given.outcome.status === 'PAUSED') {
      const accepted = acceptPause(run.runId, given.outcome.pause, this.#pauses);
      if (!('name' in accepted)) {
        // The next attempt (a resume) reports its own progress.
        await this.#progress.forget(run.runId).catch((error: unknown) => {
          this.#logger.warn({ err: error, runId: run.runId }, "could not drop a paused run's progress");
        });
        const paused = await accepted.pauses.pause(run.runId, given.outcome.steps, accepted.pause);
        return paused ? 'paused' : 'already-final';
      }
      conclusion = { ...given, outcome: failedOutcome(accepted) };
    } else {
      conclusion = given as RunConclusion & { outcome: { status: FinalRunStatus } };
    }
    const { outcome } = conclusion;
    if (
      decideConclusion(outcome, run.attempt, this.#maxAttempts) === 'retry' &&
      outcome.error !== undefined
    ) {
      // Another attempt, from the start: the sync caller keeps waiting for its answer.
      await this.#progress.forget(run.runId).catch((error: unknown) => {
        this.#logger.warn({ err: error, runId: run.runId }, "could not drop a retried run's progress");
      });
      if (await this.#runs.requeue(run.runId, outcome.error)) return 'retried';
    }
    // A crashed or timed-out engine reported no steps to its worker; its callbacks may have.
    const recorded =
      outcome.steps.length > 0
        ? conclusion
        : { ...conclusion, outcome: { ...outcome, steps: await this.#reportedSteps(run.runId) } };
    this.#ended.end(run.runId);
    const { finalised, totalMs, written, errorFlow, parentRunId } = await this.#finish(run.runId, recorded);
    if (finalised) {
      this.#metrics.runFinished(written.status, { totalMs, timings: conclusion.timings });
      await this.#announceEnd(run, written.status, written.error, answeredWith(recorded.outcome.steps));
      await this.#startErrorFlow(run.runId, { errorFlow });
      await this.#answerParent(run.runId, parentRunId, written, answeredWith(recorded.outcome.steps));
    }
    return finalised ? 'finished' : 'already-final';
  }

  /**
   * The final write, tried twice (a session ended under it, by a failover or
   * pg_terminate_backend, takes it on a new one). One that Postgres refuses both times (a value
   * it cannot hold, a constraint, a trigger) would leave the run RUNNING for the reconciler's
   * lost-worker path, which runs an answered run again: the run ends INTERNAL_ERROR naming the
   * write's error instead, without its steps (they may be what was refused) but with its log's
   * key (the log in S3 holds them) and its timings. Only when that write fails too (Postgres
   * unreachable) does the error go on.
   */
  async #finish(
    runId: string,
    conclusion: RunConclusion & { outcome: { status: FinalRunStatus } },
  ): Promise<FinishResult & { written: { status: FinalRunStatus; error?: SerializedError | undefined } }> {
    let refused: unknown;
    for (let attempt = 1; attempt <= 2; attempt += 1) {
      try {
        return { ...(await this.#runs.finish(runId, conclusion)), written: conclusion.outcome };
      } catch (error) {
        refused = error;
      }
    }
    const cause = refused instanceof Error ? refused.message : String(refused);
    this.#logger.error(
      { err: refused, runId },
      "could not write a run's final state; ending it INTERNAL_ERROR",
    );
    const { steps: _dropped, ...failed } = failedOutcome({
      name: 'RunRecordError',
      code: 'INTERNAL',
      message: `the run ended ${conclusion.outcome.status} but its final state could not be written (${cause}); it is not run again`,
    });
    const outcome = { ...failed, logKey: conclusion.outcome.logKey };
    try {
      // Without its error flow's run: that INSERT may be what was refused.
      const finished = await this.#runs.finish(runId, { ...conclusion, outcome, startErrorFlow: false });
      return { ...finished, written: outcome };
    } catch {
      throw refused;
    }
  }

  /**
   * A final run's log upload failed after its result (its engine uploads once the outcome went):
   * the run keeps its outcome; its log key goes and `logError` says why. False when the run is
   * not final with that key from that worker (the message is stale or not this worker's).
   */
  async logFailed(failure: LogFailure): Promise<boolean> {
    const recorded = await this.#runs.recordLogFailure(failure);
    if (!recorded) {
      this.#logger.warn(
        { runId: failure.runId, logKey: failure.logKey },
        'ignored a log failure for no final run',
      );
    }
    return recorded;
  }

  /**
   * The outcome of an attempt whose worker is gone: WORKER_LOST, retried while attempts are left.
   * It carries no steps, so `conclude` records those the engine reported through its callbacks.
   */
  lostWorkerOutcome(): RunConclusion {
    return {
      outcome: failedOutcome({
        name: 'WorkerLost',
        code: 'WORKER_LOST',
        message: 'the worker running this job disconnected',
      }),
    };
  }

  /** RUNNING → TIMEOUT (RUN_ABANDONED) for runs past `deadlineSeconds` with nobody left to report on them. */
  async sweep(deadlineSeconds: number): Promise<string[]> {
    const error: SerializedError = {
      name: 'RunSweeper',
      code: 'RUN_ABANDONED',
      message: `no worker reported this run within ${deadlineSeconds}s of its start`,
    };
    const swept = await this.#runs.sweepOverdue(deadlineSeconds, error);
    // Their engines, should they still be calling, are refused from now on (on this instance).
    for (const run of swept) {
      this.#ended.end(run.id);
      this.#metrics.runFinished(runStatusOf(error.code));
      // Its error flow's run, created by the same statement (the skipped reason is on the row).
      if (run.errorRun !== null) {
        await this.#startErrorFlow(run.id, {
          errorFlow: { flowId: run.errorRun.flowId, run: run.errorRun, skipped: null },
        });
      }
      if (run.parentRunId !== null) {
        await this.#answerParent(run.id, run.parentRunId, { status: runStatusOf(error.code), error }, null);
      }
    }
    return swept.map((run) => run.id);
  }

  /**
   * Enqueues the error run the final write created for a failed run (it is in Postgres already:
   * should this enqueue be lost, the reconciler enqueues it from its row), or says why the run's
   * error flow could not start.
   */
  async #startErrorFlow(runId: string, finished: Pick<FinishResult, 'errorFlow'>): Promise<void> {
    const errorFlow = finished.errorFlow;
    if (errorFlow === undefined) return;
    if (errorFlow.run === null) {
      if (errorFlow.skipped !== null) {
        this.#logger.warn(
          { runId, errorFlowId: errorFlow.flowId, reason: errorFlow.skipped },
          'the failed run names an error flow that could not start',
        );
      }
      return;
    }
    const errorRun: ErrorRun = errorFlow.run;
    this.#metrics.runAccepted();
    const job: RunJobData = {
      version: 1,
      type: 'run-flow',
      runId: errorRun.id,
      flowId: errorRun.flowId,
      flowVersionId: errorRun.flowVersionId,
      trigger: errorRun.trigger,
      syncInstanceId: null,
      acceptedAt: Date.now(),
    };
    try {
      await this.#queue.add(job, errorRun.rank);
    } catch (error) {
      this.#logger.warn(
        { err: error, runId, errorRunId: errorRun.id },
        "could not enqueue an error flow's run; the reconciler enqueues it from its row",
      );
    }
  }

  /** What the engine reported through its callbacks (progress and response, in Redis). */
  async #reportedSteps(runId: string): Promise<StepResult[]> {
    try {
      return (await this.#progress.read(runId)).steps;
    } catch (error) {
      this.#logger.warn({ err: error, runId }, "could not read a run's progress from Redis");
      return [];
    }
  }

  /**
   * A sub-flow's end, once written, answers its parent's waiting step. A failure here leaves the
   * parent to its step's timeout: logged, never the child's end undone.
   */
  async #answerParent(
    runId: string,
    parentRunId: string | undefined,
    written: { status: FinalRunStatus; error?: SerializedError | undefined },
    response: FlowResponse | null,
  ): Promise<void> {
    if (parentRunId === undefined || this.#childEnded === undefined) return;
    try {
      await this.#childEnded({
        runId,
        parentRunId,
        status: written.status,
        ...(written.error === undefined ? {} : { error: written.error }),
        ...(response === null ? {} : { response }),
      });
    } catch (error) {
      this.#logger.error({ err: error, runId, parentRunId }, "could not answer a sub-flow's parent");
    }
  }

  /**
   * The one place a waiting sync caller is told its run ended. A caller still waiting although a
   * step answered lost that answer on the way (Redis failed over between the response and the
   * end): it gets the answer the run recorded (`answered`) instead of "no step answered".
   */
  async #announceEnd(
    run: Pick<RunAttempt, 'runId' | 'syncInstanceId'>,
    status: FinalRunStatus,
    error: SerializedError | undefined,
    answered: FlowResponse | null = null,
  ): Promise<void> {
    if (run.syncInstanceId === null) return;
    if (answered !== null && status === 'SUCCEEDED') {
      await this.#hub.publish(run.syncInstanceId, {
        version: 1,
        type: 'flow-response',
        runId: run.runId,
        response: answered,
      });
      return;
    }
    await this.#hub.publish(run.syncInstanceId, {
      version: 1,
      type: 'run-ended',
      runId: run.runId,
      status,
      ...(error === undefined ? {} : { error }),
    });
  }
}

/** A sub-flow's run ended (RunLifecycle's `childEnded`): what its parent's step is answered with. */
export interface ChildEnd {
  runId: string;
  parentRunId: string;
  status: FinalRunStatus;
  error?: SerializedError;
  response?: FlowResponse;
}
export type ChildEnded = (end: ChildEnd) => Promise<void>;

/** The webhook/return_response step's answer as the run recorded it, if one answered. */
function answeredWith(steps: readonly StepResult[]): FlowResponse | null {
  for (let index = steps.length - 1; index >= 0; index--) {
    const step = steps[index];
    if (step?.kind !== RESPONSE_KIND || step.status !== 'SUCCEEDED') continue;
    const parsed = FlowResponseSchema.safeParse(step.output);
    return parsed.success ? parsed.data : null;
  }
  return null;
}

const RESPONSE_KIND = 'webhook/return_response';
