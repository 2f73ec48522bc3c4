import type { Logger } from '@flowbox/node-kit';
import type { RunJobData } from '@flowbox/protocol';
import { LeaderPass } from '../db/leader-pass.ts';
import type { Pool } from '../db/pool.ts';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { runJobId } from '../queue/run-queue.ts';
import type { RunLifecycle } from './run-lifecycle.ts';
import { dueRuns } from './run-waits.ts';
import type { RunsRepository, UnfinishedCursor, UnfinishedRun } from './runs-repository.ts';

/** The leader lock the apps take turns on; a pass that outlives it (it should not) may overlap another. */
const LOCK_NAME = 'run-reconciler';
const LOCK_SECONDS = 60;
/** Candidates read and checked against Redis at a time (one SELECT, one pipelined EXISTS). */
const PAGE_SIZE = 500;
/** Pages of QUEUED runs per pass: bounds a pass over a full backlog (WEBHOOK_MAX_QUEUED_RUNS). */
const MAX_PAGES = 20;
/**
 * A RUNNING run's worker kills its engine at the flow timeout and reports at once; past this
 * much more, a run without a job has nobody left who will report it.
 */
const RUNNING_GRACE_SECONDS = 10;

/** The queue as the reconciler uses it (RunQueue). */
export interface ReconcilerQueue {
  missing(runs: ReadonlyArray<{ id: string; flowId: string; jobId?: string }>): Promise<Set<string>>;
  unfinished(jobs: ReadonlyArray<{ id: string; flowId: string; jobId: string }>): Promise<Set<string>>;
  add(data: RunJobData): Promise<void>;
}

export interface Reconciled {
  /** QUEUED runs whose job was gone, enqueued again. */
  requeued: string[];
  /** RUNNING runs whose job was gone, taken down the lost-worker path. */
  workerLost: string[];
  /** PAUSED runs due whose resume job was gone, or answered whose resume was lost, resumed. */
  resumed: string[];
}

/** How the reconciler resumes a paused run whose resume job Redis lost (RunResumer). */
export interface ReconcilerResumer {
  resume(runId: string, options: { expectedResumes?: number; cause: 'reconciler' }): Promise<number | null>;
}

/**
 * Makes Postgres, not Redis, the truth about which runs still have to run. Every app runs one;
 * the passes take turns under a leader lock in Postgres (db/leader-lock.ts). A run QUEUED for longer than `queuedAfterSeconds`
 * whose job is not in Redis (restarted empty, a failover that dropped the last writes, an app
 * that died between its INSERT and its enqueue) is enqueued again under the same job id, so a
 * job that does exist is never doubled. A RUNNING run past its flow timeout whose job (and so
 * its lease) is gone takes the lost-worker path: retried while attempts are left.
 */
export class RunReconciler {
  readonly #pass: LeaderPass;
  readonly #runs: RunsRepository;
  readonly #lifecycle: RunLifecycle;
  readonly #queue: ReconcilerQueue;
  readonly #resumer: ReconcilerResumer | undefined;
  readonly #pool: Pool;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #queuedAfterSeconds: number;
  readonly #runningAfterSeconds: number;
  readonly #redisDown: () => boolean;
  readonly #isOutage: (error: unknown) => boolean;

  constructor(options: {
    pool: Pool;
    /** This app's INSTANCE_ID: who holds the lock. */
    holder: string;
    runs: RunsRepository;
    lifecycle: RunLifecycle;
    queue: ReconcilerQueue;
    /** Resumes PAUSED runs whose resume job is lost; without it paused runs are left alone. */
    resumer?: ReconcilerResumer | undefined;
    metrics: AppMetrics;
    logger: Logger;
    queuedAfterSeconds: number;
    flowTimeoutSeconds: number;
    /** While Redis is down nothing can be enqueued: passes are skipped (the outage is logged once). */
    redisDown: () => boolean;
    isOutage: (error: unknown) => boolean;
  }) {
    this.#pass = new LeaderPass({
      pool: options.pool,
      name: LOCK_NAME,
      holder: options.holder,
      ttlSeconds: LOCK_SECONDS,
      intervalMs: Math.max(1_000, (options.queuedAfterSeconds * 1000) / 2),
    });
    this.#runs = options.runs;
    this.#lifecycle = options.lifecycle;
    this.#queue = options.queue;
    this.#resumer = options.resumer;
    this.#pool = options.pool;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#queuedAfterSeconds = options.queuedAfterSeconds;
    this.#runningAfterSeconds = options.flowTimeoutSeconds + RUNNING_GRACE_SECONDS;
    this.#redisDown = options.redisDown;
    this.#isOutage = options.isOutage;
  }

  start(): void {
    this.#pass.start(
      () => this.reconcile(),
      (error) => {
        if (this.#isOutage(error))
          this.#logger.debug({ err: error }, 'reconcile pass skipped: Redis is down');
        else this.#logger.warn({ err: error }, 'reconcile pass failed; trying again next interval');
      },
    );
  }

  /** One pass, unless Redis is down or another pass is on (here or in another app); returns what it recovered. */
  async reconcile(): Promise<Reconciled> {
    const done: Reconciled = { requeued: [], workerLost: [], resumed: [] };
    if (this.#redisDown()) return done;
    await this.#pass.run(async () => {
      await this.#requeueLost(done);
      await this.#recoverRunning(done);
      await this.#resumeDue(done);
    });
    return done;
  }

  close(): Promise<void> {
    return this.#pass.close();
  }

  async #requeueLost(done: Reconciled): Promise<void> {
    let after: UnfinishedCursor | undefined;
    for (let page = 0; page < MAX_PAGES; page++) {
      const queued = await this.#runs.unfinishedSince({
        status: 'QUEUED',
        olderThanSeconds: this.#queuedAfterSeconds,
        limit: PAGE_SIZE,
        after,
      });
      const missing = await this.#queue.missing(
        queued.map((run) => ({ id: run.id, flowId: run.flowId, jobId: runJobId(jobDataOf(run)) })),
      );
      for (const run of queued) {
        if (!missing.has(run.id)) continue;
        // Same job id: should another app have enqueued it meanwhile, BullMQ keeps the one job.
        await this.#queue.add(jobDataOf(run));
        done.requeued.push(run.id);
        this.#metrics.runRecovered('requeued');
        this.#logger.warn(
          { runId: run.id, flowId: run.flowId, attempts: run.attempts },
          'enqueued a QUEUED run again: Redis had lost its job',
        );
      }
      const last = queued.at(-1);
      if (queued.length < PAGE_SIZE || last === undefined) return;
      after = last.cursor;
    }
  }

  async #recoverRunning(done: Reconciled): Promise<void> {
    const running = await this.#runs.unfinishedSince({
      status: 'RUNNING',
      olderThanSeconds: this.#runningAfterSeconds,
      limit: PAGE_SIZE,
    });
    const missing = await this.#queue.missing(running);
    for (const run of running) {
      if (!missing.has(run.id)) continue;
      const attempt = {
        runId: run.id,
        flowId: run.flowId,
        syncInstanceId: run.syncInstanceId,
        attempt: run.attempts,
      };
      const result = await this.#lifecycle.conclude(attempt, this.#lifecycle.lostWorkerOutcome());
      if (result === 'retried') await this.#queue.add(jobDataOf(run));
      done.workerLost.push(run.id);
      this.#metrics.runRecovered('worker_lost');
      this.#logger.warn(
        { runId: run.id, flowId: run.flowId, attempts: run.attempts, result },
        'a RUNNING run had lost its job and its worker: took the lost-worker path',
      );
    }
  }

  /**
   * PAUSED runs with a waiting point due, or answered, more than `queuedAfterSeconds` ago. A due
   * one whose delayed resume job Redis still holds unfinished is on its way (behind a backlog, or
   * its flow at its cap) and keeps its place; one whose job is gone (Redis restarted empty, a
   * failover) or finished without resuming it, and an answered one (its resume was lost), is
   * resumed: its job is made again from its row, due now. One indexed read (run_waits_due) and
   * one pipelined read of Redis; each resume is the conditional one, so a job that starts the run
   * meanwhile resumes nothing twice.
   */
  async #resumeDue(done: Reconciled): Promise<void> {
    if (this.#resumer === undefined) return;
    const due = await dueRuns(this.#pool, this.#queuedAfterSeconds, PAGE_SIZE);
    const onItsWay = await this.#queue.unfinished(
      due
        .filter((run) => !run.answered)
        .map((run) => ({
          id: run.runId,
          flowId: run.flowId,
          jobId: runJobId({ runId: run.runId, resume: run.resumes + 1 }),
        })),
    );
    for (const run of due) {
      if (onItsWay.has(run.runId)) continue;
      const resumed = await this.#resumer.resume(run.runId, {
        expectedResumes: run.resumes,
        cause: 'reconciler',
      });
      if (resumed === null) continue;
      done.resumed.push(run.runId);
      this.#logger.warn(
        { runId: run.runId, resumes: resumed, answered: run.answered },
        run.answered
          ? 'resumed a PAUSED run whose wait was answered: its resume was lost'
          : 'resumed a PAUSED run past its time: its delayed resume job was lost',
      );
    }
  }
}

/**
 * The job a run's row describes; its attempts go on from the row's count. A resumed run's job is
 * its last resume's (`resume: n`, without the trigger), and the row's attempts are that
 * resume's (a resume counts from 0).
 */
export function jobDataOf(run: UnfinishedRun): RunJobData {
  const data: RunJobData = {
    version: 1,
    type: 'run-flow',
    runId: run.id,
    flowId: run.flowId,
    flowVersionId: run.flowVersionId,
    // A resume's job carries no trigger: its dispatch reads it from the row.
    ...(run.resumes > 0 ? { resume: run.resumes } : { trigger: run.trigger }),
    syncInstanceId: run.syncInstanceId,
    acceptedAt: run.createdAt.getTime(),
    priorAttempts: run.attempts,
  };
  if (run.traceparent !== null) data.traceparent = run.traceparent;
  return data;
}
