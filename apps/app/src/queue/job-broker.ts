import { randomUUID } from 'node:crypto';
import type { Logger } from '@flowbox/node-kit';
import { parseMessage, type RunJobData, RunJobDataSchema } from '@flowbox/protocol';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import type { Redis } from 'ioredis';
import { RUN_QUEUE_NAME } from './run-queue.ts';

/** A job taken from the queue for one worker; the app holds its lock until the result. */
export interface LeasedJob {
  jobId: string;
  data: RunJobData;
  /** 1 for the job's first start, 2 for its first retry, and so on. */
  attempt: number;
  /**
   * Ends the job; with `fetchNext`, the same Redis call leases the next waiting job (null when
   * none waits), so a worker that finished one need not poll for the next.
   */
  complete(options?: { fetchNext: boolean }): Promise<LeasedJob | null>;
  /**
   * Ends the job as failed. With `retry`, BullMQ puts it back in the queue when it has attempts
   * left (RunQueue sets them); without, it is failed for good.
   */
  fail(reason: string, options?: { fetchNext?: boolean; retry?: boolean }): Promise<LeasedJob | null>;
  /** Puts the job back in the queue untouched (its worker went away before receiving it). */
  release(): Promise<void>;
  /**
   * Puts the job back in the queue after `ms`, untouched and without counting an attempt (its
   * flow runs as many runs as it may); it keeps its priority, and a worker takes another job.
   */
  postpone(ms: number): Promise<void>;
}

interface PendingPoll {
  resolve: (job: LeasedJob | null) => void;
}

const LOCK_DURATION_MS = 30_000;

/**
 * Takes jobs out of BullMQ on behalf of the socket.io workers, which hold no Redis credentials.
 * Polls wait in FIFO order; one fetch loop per app instance serves them through a single
 * blocking Redis connection, so the app does not open a connection per worker.
 */
export class JobBroker {
  readonly #worker: Worker<RunJobData>;
  readonly #logger: Logger;
  readonly #polls: PendingPoll[] = [];
  readonly #leases = new Map<string, NodeJS.Timeout>();
  readonly #isOutage: (error: unknown) => boolean;
  #fetching = false;
  #closed = false;

  constructor(options: {
    connection: Redis;
    prefix: string;
    logger: Logger;
    blockSeconds: number;
    /**
     * True for an error that says Redis is unreachable: the app logs an outage once (RedisOutage),
     * so the broker logs those at debug rather than once per retry.
     */
    isOutage?: (error: unknown) => boolean;
  }) {
    this.#logger = options.logger;
    this.#isOutage = options.isOutage ?? (() => false);
    this.#worker = new Worker<RunJobData>(RUN_QUEUE_NAME, null, {
      connection: options.connection,
      prefix: options.prefix,
      autorun: false,
      lockDuration: LOCK_DURATION_MS,
      drainDelay: options.blockSeconds,
    });
    this.#worker.on('error', (error) => {
      if (this.#isOutage(error)) this.#logger.debug({ err: error }, 'job broker error');
      else this.#logger.error({ err: error }, 'job broker error');
    });
  }

  async start(): Promise<void> {
    await this.#worker.waitUntilReady();
    // Jobs whose app died while holding them go back to the queue after their lock expires.
    void this.#worker.startStalledCheckTimer().catch((error: unknown) => {
      this.#logger.error({ err: error }, 'stalled-job checker stopped');
    });
  }

  /** Resolves with the next job, or null when none came within `timeoutMs` or `signal` aborted. */
  next(timeoutMs: number, signal: AbortSignal): Promise<LeasedJob | null> {
    if (this.#closed || signal.aborted) return Promise.resolve(null);
    return new Promise((resolve) => {
      const poll: PendingPoll = {
        resolve: (job) => {
          clearTimeout(timer);
          signal.removeEventListener('abort', onAbort);
          resolve(job);
        },
      };
      const drop = () => {
        const index = this.#polls.indexOf(poll);
        if (index >= 0) this.#polls.splice(index, 1);
        poll.resolve(null);
      };
      const onAbort = () => drop();
      const timer = setTimeout(drop, timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      this.#polls.push(poll);
      this.#pump();
    });
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const poll of this.#polls.splice(0)) poll.resolve(null);
    for (const timer of this.#leases.values()) clearInterval(timer);
    this.#leases.clear();
    await this.#worker.close(true);
  }

  #pump(): void {
    if (this.#fetching || this.#closed) return;
    this.#fetching = true;
    void this.#fetchLoop().finally(() => {
      this.#fetching = false;
      if (this.#polls.length > 0 && !this.#closed) this.#pump();
    });
  }

  async #fetchLoop(): Promise<void> {
    while (this.#polls.length > 0 && !this.#closed) {
      const token = randomUUID();
      let job: Job<RunJobData> | undefined;
      try {
        job = await this.#worker.getNextJob(token, { block: true });
      } catch (error) {
        if (this.#closed) return;
        if (this.#isOutage(error)) this.#logger.debug({ err: error }, 'could not fetch a job; retrying');
        else this.#logger.warn({ err: error }, 'could not fetch a job; retrying');
        await new Promise((r) => setTimeout(r, 1_000));
        continue;
      }
      if (job === undefined) continue;
      const lease = this.#lease(job, token);
      if (lease === null) continue;
      const poll = this.#polls.shift();
      if (poll === undefined) {
        await lease.release();
        return;
      }
      poll.resolve(lease);
    }
  }

  /**
   * Settles a job, or does nothing when Redis no longer has it (it restarted empty, or the
   * reconciler enqueued the run again): the run's row, already written, is the truth; a retry
   * left QUEUED without a job is the reconciler's to enqueue again.
   */
  async #unlessGone(jobId: string, settle: Promise<unknown>): Promise<unknown> {
    try {
      return await settle;
    } catch (error) {
      if (!(error instanceof Error) || !/^Missing (key|lock) for job/.test(error.message)) throw error;
      this.#logger.info(
        { jobId, reason: error.message },
        'settled a job Redis no longer holds; the run row stands',
      );
      return null;
    }
  }

  #lease(job: Job<RunJobData>, token: string): LeasedJob | null {
    const jobId = job.id ?? '';
    const parsed = parseMessage(RunJobDataSchema, job.data);
    if (!parsed.ok) {
      this.#logger.error({ jobId, reason: parsed.error }, 'dropped a job with invalid data');
      void job.moveToFailed(new Error(`invalid job data: ${parsed.error}`), token, false).catch(() => {});
      return null;
    }
    // Keep the lock while a worker runs the job; the app, not the worker, talks to Redis.
    const renew = setInterval(() => {
      job.extendLock(token, LOCK_DURATION_MS).catch((error: unknown) => {
        const level = this.#isOutage(error) ? 'debug' : 'warn';
        this.#logger[level]({ err: error, jobId }, 'could not extend a job lock');
      });
    }, LOCK_DURATION_MS / 2);
    this.#leases.set(jobId, renew);
    const endLease = () => {
      clearInterval(renew);
      this.#leases.delete(jobId);
    };
    // BullMQ locks a job fetched along with a finish under the same token.
    const next = (result: unknown): LeasedJob | null => {
      if (!Array.isArray(result) || result[0] == null || this.#closed) return null;
      const [jobData, nextId] = result as [Parameters<typeof Job.fromJSON>[1], string];
      return this.#lease(Job.fromJSON(this.#worker, jobData, nextId) as Job<RunJobData>, token);
    };
    return {
      jobId,
      data: parsed.value,
      attempt: job.attemptsMade + 1 + (parsed.value.priorAttempts ?? 0),
      complete: async (options) => {
        endLease();
        return next(
          await this.#unlessGone(jobId, job.moveToCompleted('done', token, options?.fetchNext === true)),
        );
      },
      fail: async (reason, options) => {
        endLease();
        const error = options?.retry === true ? new Error(reason) : new UnrecoverableError(reason);
        return next(
          await this.#unlessGone(jobId, job.moveToFailed(error, token, options?.fetchNext === true)),
        );
      },
      release: async () => {
        endLease();
        await job.moveToWait(token);
      },
      postpone: async (ms) => {
        endLease();
        await job.moveToDelayed(Date.now() + ms, token);
      },
    };
  }
}
