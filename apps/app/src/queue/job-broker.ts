import { randomUUID } from 'node:crypto';
import type { Logger } from '@flowbox/node-kit';
import { parseMessage, type QueuedJobData, QueuedJobDataSchema } from '@flowbox/protocol';
import { Job, UnrecoverableError, Worker } from 'bullmq';
import type { RedisClient } from '../redis/redis-clients.ts';
import { retryRedis } from '../redis/redis-retry.ts';
import { HeldRuns } from './held-runs.ts';
import type { JobSource } from './job-source.ts';
import type { LeasedJob } from './leased-job.ts';
import { RUN_QUEUE_NAME } from './queue-shards.ts';
import { settleUnlessGone } from './settle-job.ts';
import { type PollClaim, WaitingPolls } from './waiting-polls.ts';

const LOCK_DURATION_MS = 30_000;
/** The wait before fetching again after a fetch failed. */
const FETCH_RETRY_STEP_MS = 1_000;

/** One shard's BullMQ worker, and whether it is blocked waiting for a job on our behalf. */
interface Shard {
  worker: Worker<QueuedJobData>;
  waiting: boolean;
  /** A blocking fetch is out on it: it was empty, and nothing has arrived since (or is arriving). */
  blocked: boolean;
}

/**
 * Takes jobs out of BullMQ on behalf of the socket.io workers, which hold no Redis credentials.
 * Polls wait in FIFO order; one fetch loop per app instance serves them through a single
 * blocking Redis connection, so the app does not open a connection per worker.
 *
 * With several shards (QUEUE_SHARDS), a poll is served from the shards in turn (round-robin
 * over the shards that have a job, each giving its own rank order), without blocking; when none
 * has one, every shard blocks on its own connection (on a cluster, on the node that holds it)
 * until one has, and the turn starts again. Jobs thus leave every shard at its share however
 * long another shard's backlog is.
 * The other shards' waits outlast the poll one of them served (by up to `blockSeconds`): a job
 * they take meanwhile with no poll left goes back to the queue at once (release).
 */
export class JobBroker implements JobSource {
  readonly #shards: Shard[];
  readonly #logger: Logger;
  readonly #polls = new WaitingPolls(() => this.#pump());
  readonly #leases = new Map<string, NodeJS.Timeout>();
  readonly #isOutage: (error: unknown) => boolean;
  /** Aborted at close: ends the fetch loops' waits between retries. */
  readonly #closing = new AbortController();
  #fetching = false;
  #closed = false;
  /** The shard the next turn starts at. */
  #cursor = 0;
  /** Fresh runs held for this app's busy workers while the queue is empty (hold). */
  readonly #held: HeldRuns;
  /** Jobs this app has added to the queue so far (RunQueue.adds). */
  readonly #adds: () => number;
  /** `#adds` when a fetch that then found every shard empty began; null once a fetch found a job. */
  #emptyAt: number | null = null;

  constructor(options: {
    connection: RedisClient;
    prefix: string;
    /** The shards' queue names (runQueueNames); one queue named `runs` when unset. */
    names?: readonly string[];
    logger: Logger;
    blockSeconds: number;
    /**
     * True for an error that says Redis is unreachable: the app logs an outage once (RedisOutage),
     * so the broker logs those at debug rather than once per retry.
     */
    isOutage?: (error: unknown) => boolean;
    /** QUEUE_HELD_RUNS_MAX: fresh runs this app may hold for its own workers (0: none). */
    heldMax?: number;
    /** Jobs this app has added to the queue so far (RunQueue.adds); any add ends `hold`'s turn. */
    adds?: () => number;
    /** How long a run may be held (HeldRuns `maxMs`). */
    heldMaxMs?: number;
  }) {
    this.#logger = options.logger;
    this.#adds = options.adds ?? (() => 0);
    this.#held = new HeldRuns({
      max: options.heldMax ?? 0,
      ...(options.heldMaxMs === undefined ? {} : { maxMs: options.heldMaxMs }),
      onSpillError: (error) => this.#logFetchError(error),
    });
    this.#isOutage = options.isOutage ?? (() => false);
    this.#shards = (options.names ?? [RUN_QUEUE_NAME]).map((name) => {
      const worker = new Worker<QueuedJobData>(name, null, {
        connection: options.connection,
        prefix: options.prefix,
        autorun: false,
        lockDuration: LOCK_DURATION_MS,
        drainDelay: options.blockSeconds,
      });
      worker.on('error', (error) => {
        if (this.#isOutage(error)) this.#logger.debug({ err: error }, 'job broker error');
        else this.#logger.error({ err: error }, 'job broker error');
      });
      return { worker, waiting: false, blocked: false };
    });
  }

  async start(): Promise<void> {
    await Promise.all(this.#shards.map((shard) => shard.worker.waitUntilReady()));
    // Jobs whose app died while holding them go back to the queue after their lock expires.
    for (const { worker } of this.#shards) {
      void worker.startStalledCheckTimer().catch((error: unknown) => {
        this.#logger.error({ err: error }, 'stalled-job checker stopped');
      });
    }
  }

  /** Every shard has a blocking fetch out: each was found empty, and no job has reached it since. */
  get drained(): boolean {
    return this.#shards.every((shard) => shard.blocked);
  }

  /** Polls waiting for a job: idle workers of this app. */
  get waitingPolls(): number {
    return this.#polls.length;
  }

  /** A held run waits and the queue is known empty: the next job costs no Redis call. */
  get heldReady(): boolean {
    return this.#held.size > 0 && this.#knownEmpty();
  }

  /** Fresh runs held in this app's memory for its workers (hold). */
  get heldRuns(): number {
    return this.#held.size;
  }

  /**
   * Holds the lease `make` builds for this app's next worker to finish a job, when no poll waits:
   * that worker's result's acknowledgement (or its next poll) carries it. Jobs in the queue go
   * first, as they are older; once the queue is known empty (every shard found empty since this
   * app's last add, or a blocking fetch out), the held runs are served with no Redis call at all.
   * False when QUEUE_HELD_RUNS_MAX runs are held (or a poll waits): the run is queued. Another
   * app's add is not seen here: a job it queued meanwhile may wait behind the held runs, for at
   * most HELD_RUN_MAX_MS.
   */
  hold(make: () => LeasedJob, rank: number): boolean {
    if (this.#closed || this.#polls.length > 0 || !this.#held.hasRoom) return false;
    return this.#held.add({ ...make(), held: true }, rank);
  }

  /** Ends the held run of `jobId` (its run ended before it started); false when none is held. */
  dropHeld(jobId: string): boolean {
    return this.#held.remove(jobId);
  }

  /** Sends the held runs to the queue (before the queue closes). */
  releaseHeld(): Promise<void> {
    return this.#held.spill();
  }

  /**
   * Resolves with the next job for `workerId`, or null when none came within `timeoutMs` or
   * `signal` aborted (its worker left).
   */
  async next(timeoutMs: number, signal: AbortSignal, workerId: string): Promise<LeasedJob | null> {
    if (this.#closed || signal.aborted) return null;
    if (this.#polls.length === 0 && this.#held.size > 0) {
      const lease = await this.nextWaiting();
      if (lease !== null) return lease;
    }
    return this.#polls.wait(timeoutMs, signal, workerId);
  }

  /**
   * Gives the lease `make` builds to the oldest waiting poll, if one waits and the queue is
   * drained (every shard was found empty, and a job in any shard wakes its fetch). False
   * otherwise: a poll whose fetch is still on its way to a waiting job (a worker polling ahead
   * of its last result while others queue) gets that job, and the fresh run queues behind it.
   * Only fresh runs come here (RunHandoff); a job that reached a shard in the same instant as
   * this run waits for the next poll, the one run it can be overtaken by.
   */
  offer(make: () => LeasedJob): boolean {
    if (this.#closed || !this.drained) return false;
    const poll = this.#polls.take();
    if (poll === undefined) return false;
    poll.resolve(make());
    return true;
  }

  /**
   * Sets the oldest waiting poll aside for a run about to be accepted, on the terms of `offer`
   * (a poll waits and the queue is drained); null otherwise. The claim ends with `give` or
   * `putBack`; meanwhile no job and no timeout reaches that poll, and a worker that leaves ends it.
   */
  claim(): PollClaim | null {
    if (this.#closed || !this.drained) return null;
    return this.#polls.claim(() => this.#closed);
  }

  /**
   * The next waiting job, leased, for a worker that finished a job handed to it directly (a
   * result that asks for the next one): from the queue, else a held run. With no Redis call while
   * the queue is known empty (see hold).
   */
  async nextWaiting(): Promise<LeasedJob | null> {
    if (this.#closed) return null;
    if (this.#knownEmpty()) return this.#held.take();
    return (await this.#leaseInTurn()) ?? this.#held.take();
  }

  /** Nothing waits in any shard as far as this app knows (see hold). */
  #knownEmpty(): boolean {
    return this.drained || this.#emptyAt === this.#adds();
  }

  /** Records what a fetch begun when the adds stood at `adds` found. */
  #found(job: unknown, adds: number): void {
    this.#emptyAt = job == null ? adds : null;
  }

  /** The next job from the shards in turn, leased; null when none waits or Redis failed (logged). */
  async #leaseInTurn(): Promise<LeasedJob | null> {
    try {
      const adds = this.#adds();
      const taken = await this.#takeInTurn();
      this.#found(taken, adds);
      return taken === null ? null : this.#lease(taken.job, taken.token, taken.shard);
    } catch (error) {
      // Whatever was settled stays so; the worker polls for its next job instead (a node may be down).
      this.#logFetchError(error);
      return null;
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    this.#closing.abort();
    this.#polls.closeAll();
    await this.#held.spill();
    for (const timer of this.#leases.values()) clearInterval(timer);
    this.#leases.clear();
    await Promise.all(this.#shards.map((shard) => shard.worker.close(true)));
  }

  #pump(): void {
    if (this.#fetching || this.#closed) return;
    this.#fetching = true;
    const loop = this.#shards.length === 1 ? this.#fetchLoop() : this.#serveInTurn();
    void loop.finally(() => {
      this.#fetching = false;
      if (this.#polls.length > 0 && !this.#closed && !this.#shards.some((shard) => shard.waiting)) {
        this.#pump();
      }
    });
  }

  /** One shard: blocks on it and hands each job to the oldest poll. */
  async #fetchLoop(): Promise<void> {
    const [shard] = this.#shards;
    while (shard !== undefined && this.#polls.length > 0 && !this.#closed) {
      let fetched: { job: Job<QueuedJobData> | undefined; token: string };
      try {
        fetched = await this.#retryFetch(async () => {
          const token = randomUUID();
          return { job: await this.#blockingFetch(shard, token), token };
        });
      } catch (error) {
        if (!this.#closed) this.#logFetchError(error);
        return;
      }
      if (fetched.job === undefined) continue;
      if (!(await this.#handOut(fetched.job, fetched.token, shard))) return;
    }
  }

  /** Several shards: serves the polls from the shards in turn; when all are empty, waits on each. */
  async #serveInTurn(): Promise<void> {
    while (this.#polls.length > 0 && !this.#closed) {
      let taken: { job: Job<QueuedJobData>; token: string; shard: Shard } | null;
      try {
        taken = await this.#retryFetch(() => this.#takeInTurn());
      } catch (error) {
        if (!this.#closed) this.#logFetchError(error);
        return;
      }
      if (taken === null) {
        for (const shard of this.#shards) if (!shard.waiting) void this.#waitOn(shard);
        return;
      }
      if (!(await this.#handOut(taken.job, taken.token, taken.shard))) return;
    }
  }

  /** The next job from the shards in turn, without blocking; null when every shard is empty. */
  async #takeInTurn(): Promise<{ job: Job<QueuedJobData>; token: string; shard: Shard } | null> {
    const count = this.#shards.length;
    for (let offset = 0; offset < count; offset += 1) {
      const index = (this.#cursor + offset) % count;
      const shard = this.#shards[index];
      if (shard === undefined) continue;
      const token = randomUUID();
      const job = await shard.worker.getNextJob(token, { block: false });
      if (job === undefined) continue;
      this.#cursor = (index + 1) % count;
      return { job, token, shard };
    }
    return null;
  }

  /**
   * Blocks on one shard, again after each block times out, while polls wait; once it has a job
   * (or fails), it hands the job out and serves in turn again.
   */
  async #waitOn(shard: Shard): Promise<void> {
    shard.waiting = true;
    try {
      while (this.#polls.length > 0 && !this.#closed) {
        // takeInTurn found every shard empty just before.
        const { job, token } = await this.#retryFetch(async () => {
          const token = randomUUID();
          return { job: await this.#blockingFetch(shard, token, { foundEmpty: true }), token };
        });
        if (job === undefined) continue;
        // A job that serves a poll moves the turn past its shard, as one taken in turn does (one
        // released for want of a poll does not).
        if (this.#polls.length > 0) this.#cursor = (this.#shards.indexOf(shard) + 1) % this.#shards.length;
        await this.#handOut(job, token, shard);
        break;
      }
    } catch (error) {
      if (!this.#closed) this.#logFetchError(error);
    } finally {
      shard.waiting = false;
    }
    if (this.#polls.length > 0 && !this.#closed) this.#pump();
  }

  /**
   * A job from `shard`, waiting for one when it is empty. It counts as blocked (`drained`) only
   * once it was found empty: a fetch that finds a job at once must not let a fresh run overtake it.
   */
  async #blockingFetch(
    shard: Shard,
    token: string,
    { foundEmpty = false }: { foundEmpty?: boolean } = {},
  ): Promise<Job<QueuedJobData> | undefined> {
    if (!foundEmpty) {
      const ready = await shard.worker.getNextJob(token, { block: false });
      if (ready !== undefined) return ready;
    }
    shard.blocked = true;
    const adds = this.#adds();
    try {
      const job = await shard.worker.getNextJob(token, { block: true });
      // One shard: a wait that timed out found the queue empty.
      if (this.#shards.length === 1) this.#found(job, adds);
      return job;
    } finally {
      shard.blocked = false;
    }
  }

  /** Gives a fetched job to the oldest poll; false when no poll is left (the job went back). */
  async #handOut(job: Job<QueuedJobData>, token: string, shard: Shard): Promise<boolean> {
    const lease = this.#lease(job, token, shard);
    if (lease === null) return true;
    const poll = this.#polls.take();
    if (poll === undefined) {
      await lease.release();
      return false;
    }
    poll.resolve(lease);
    return true;
  }

  /**
   * A fetch, tried again every second after any failure while polls wait; rejects once none
   * waits, or at close.
   */
  #retryFetch<T>(fetch: () => Promise<T>): Promise<T> {
    return retryRedis(fetch, {
      everyMs: FETCH_RETRY_STEP_MS,
      retryIf: () => this.#polls.length > 0 && !this.#closed,
      signal: this.#closing.signal,
      onRetry: (error) => this.#logFetchError(error),
    });
  }

  #logFetchError(error: unknown): void {
    if (this.#isOutage(error)) this.#logger.debug({ err: error }, 'could not fetch a job; retrying');
    else this.#logger.warn({ err: error }, 'could not fetch a job; retrying');
  }

  #unlessGone(
    jobId: string,
    settle: () => Promise<unknown>,
    { retry }: { retry: boolean },
  ): Promise<unknown> {
    return settleUnlessGone(jobId, settle, { retry, closed: () => this.#closed, logger: this.#logger });
  }

  /**
   * The next job for a worker that settled one: a held run when it asked for one and the settle
   * fetched none, else what the settle fetched (`fetched`), noting whether the queue was empty.
   */
  async #afterSettle(
    wanted: boolean,
    fetched: boolean,
    sharded: boolean,
    adds: number,
    nextOf: () => LeasedJob | null | Promise<LeasedJob | null>,
  ): Promise<LeasedJob | null> {
    if (wanted && !fetched) return this.#held.take();
    const next = await nextOf();
    // Sharded, nextInTurn recorded it already.
    if (fetched && !sharded) this.#found(next, adds);
    return next ?? (wanted ? this.#held.take() : null);
  }

  #lease(job: Job<QueuedJobData>, token: string, shard: Shard): LeasedJob | null {
    const jobId = job.id ?? '';
    const parsed = parseMessage(QueuedJobDataSchema, job.data);
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
      return this.#lease(Job.fromJSON(shard.worker, jobData, nextId) as Job<QueuedJobData>, token, shard);
    };
    // With shards, the next job comes from the shards in turn, not from this one's backlog.
    const sharded = this.#shards.length > 1;
    const nextInTurn = (fetchNext: boolean): Promise<LeasedJob | null> =>
      !fetchNext || this.#closed ? Promise.resolve(null) : this.#leaseInTurn();
    return {
      jobId,
      data: parsed.value,
      attempt:
        job.attemptsMade + 1 + (parsed.value.type === 'run-flow' ? (parsed.value.priorAttempts ?? 0) : 0),
      complete: async (options) => {
        endLease();
        // With the queue known empty, a held run is next: no fetch.
        const fetchNext = options?.fetchNext === true && !(this.#held.size > 0 && this.#knownEmpty());
        const adds = this.#adds();
        const complete = () => job.moveToCompleted('done', token, fetchNext && !sharded);
        const result = await this.#unlessGone(jobId, complete, { retry: true });
        return this.#afterSettle(options?.fetchNext === true, fetchNext, sharded, adds, () =>
          sharded ? nextInTurn(fetchNext) : next(result),
        );
      },
      fail: async (reason, options) => {
        endLease();
        const fetchNext = options?.fetchNext === true && !(this.#held.size > 0 && this.#knownEmpty());
        const adds = this.#adds();
        const error = options?.retry === true ? new Error(reason) : new UnrecoverableError(reason);
        // Not retried: moveToFailed counts the attempt on the Job object before its script runs.
        const fail = () => job.moveToFailed(error, token, fetchNext && !sharded);
        const result = await this.#unlessGone(jobId, fail, { retry: false });
        return this.#afterSettle(options?.fetchNext === true, fetchNext, sharded, adds, () =>
          sharded ? nextInTurn(fetchNext) : next(result),
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
