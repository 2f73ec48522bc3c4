import type { Logger } from '@flowbox/node-kit';
import type { QueuedJobData, RunJobData, StepTestJobData } from '@flowbox/protocol';
import { FlowboxError } from '@flowbox/protocol';
import { Queue } from 'bullmq';
import type { RedisClient } from '../redis/redis-clients.ts';
import { RUN_QUEUE_NAME, shardOf } from './queue-shards.ts';

export { RUN_QUEUE_NAME } from './queue-shards.ts';

/** How long after a crash or a lost worker a retried attempt starts (queued or handed directly). */
export const RETRY_DELAY_MS = 1_000;

/**
 * A run job's id: the run id for its first job, `resume:<runId>:<n>` for its n-th resume, so a
 * second enqueue of the same job (the reconciler's, a retried resume) is a no-op in BullMQ.
 */
export function runJobId(data: Pick<RunJobData, 'runId' | 'resume'>): string {
  return data.resume === undefined ? data.runId : `resume:${data.runId}:${data.resume}`;
}

/** BullMQ's largest priority. */
const MAX_PRIORITY = 2_097_152;

/**
 * The producer side of the run queue. One job per run; the job id is the run id.
 *
 * Fairness between flows: a job's BullMQ priority is its run's rank within its flow (one after
 * the flow's runs still waiting; lower first, FIFO within a rank). So the queue serves every flow's first waiting run,
 * then every flow's second, and so on: a flow that queued a backlog does not hold back another
 * flow's run behind it (round-robin over the flows with waiting runs), and this costs nothing
 * per run: the rank is counted in the statement that creates the run, and the priority rides
 * the add. A rank-1 job (no run of its flow waits before it, the usual case) is added without a
 * priority: BullMQ serves jobs without one first, in FIFO order, which is the order rank 1 gives,
 * and it skips the prioritized set's bookkeeping (a counter, a sorted-set add and its pop: three
 * Redis commands per run).
 *
 * Shards (QUEUE_SHARDS): the queue is one BullMQ queue per shard name, and a flow's runs all go
 * to the shard of its id (shardOf), so the rank order above holds within each shard; the job
 * broker takes from the shards in turn.
 */
export class RunQueue {
  readonly #shards: Queue<QueuedJobData>[];
  readonly #connection: RedisClient;

  readonly #maxAttempts: number;
  #adds = 0;

  constructor(options: {
    connection: RedisClient;
    prefix: string;
    maxAttempts: number;
    /** The shards' queue names (runQueueNames); one queue named `runs` when unset. */
    names?: readonly string[];
    logger: Logger;
  }) {
    this.#maxAttempts = options.maxAttempts;
    this.#connection = options.connection;
    this.#shards = (options.names ?? [RUN_QUEUE_NAME]).map((name) => {
      const shard = new Queue<QueuedJobData>(name, {
        connection: options.connection,
        prefix: options.prefix,
      });
      // A queue closed before its connection was ready emits the refused version check here;
      // unheard, it would be an unhandled rejection. `add` reports real failures.
      shard.on('error', (error) => options.logger.debug({ err: error, queue: name }, 'run queue error'));
      return shard;
    });
  }

  /** Jobs added through this queue so far (counted as each add begins): JobBroker.hold's check. */
  get adds(): number {
    return this.#adds;
  }

  /**
   * `rank`: the run's place in its flow's queue (1: none of its flow waits before it). `delayMs`:
   * not before then (a retry, a run whose flow is at its cap).
   */
  async add(data: RunJobData, rank = 1, options: { delayMs?: number } = {}): Promise<void> {
    this.#adds += 1;
    try {
      await this.#shardOf(data.flowId).add('run', data, this.#jobOptions(data, rank, options.delayMs));
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the run queue is unavailable; try again shortly', {
        cause: error,
      });
    }
  }

  /** Adds many runs, one round trip per shard (BullMQ's addBulk), with the options `add` gives one. */
  async addBulk(runs: ReadonlyArray<{ data: RunJobData; rank: number }>): Promise<void> {
    this.#adds += runs.length;
    const byShard = new Map<Queue<QueuedJobData>, Array<{ data: RunJobData; rank: number }>>();
    for (const run of runs) {
      const shard = this.#shardOf(run.data.flowId);
      const list = byShard.get(shard);
      if (list === undefined) byShard.set(shard, [run]);
      else list.push(run);
    }
    try {
      await Promise.all(
        [...byShard].map(([shard, list]) =>
          shard.addBulk(
            list.map(({ data, rank }) => ({
              name: 'run',
              data,
              opts: this.#jobOptions(data, rank, undefined),
            })),
          ),
        ),
      );
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the run queue is unavailable; try again shortly', {
        cause: error,
      });
    }
  }

  #jobOptions(data: RunJobData, rank: number, delayMs: number | undefined) {
    return {
      jobId: runJobId(data),
      ...(delayMs === undefined ? {} : { delay: delayMs }),
      ...(rank > 1 ? { priority: Math.min(rank, MAX_PRIORITY) } : {}),
      // Retries are for crashes only (Dispatcher.conclude); a second later, not at once, so a
      // crash that takes the worker's machine down is not retried into the same state.
      attempts: this.#maxAttempts,
      backoff: { type: 'fixed' as const, delay: RETRY_DELAY_MS },
      // A resume's job is gone once done: nothing enqueues that resume again once it started
      // (a retry fails the job back into the queue, it does not complete it), and a copy that
      // did would be refused at its start. Keeping it would only hold its data.
      removeOnComplete: data.resume === undefined ? { count: 1000 } : true,
      // Failed jobs hold their trigger bodies: kept a day for inspection, and never more than
      // a bounded number of them, so a burst of failures cannot fill Redis.
      removeOnFail: { age: 24 * 3600, count: 1000 },
    };
  }

  /**
   * As `add`, in place of a job of the same id that is not running: a resumed run's job takes
   * the place of its pause's delayed resume job (same id), due now and with the row's data as the
   * resume read it. A job of that id running already (the delayed one came due in the same
   * instant) is left to start the run.
   */
  async replace(data: RunJobData): Promise<void> {
    try {
      await this.#shardOf(data.flowId).remove(runJobId(data));
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the run queue is unavailable; try again shortly', {
        cause: error,
      });
    }
    await this.add(data);
  }

  /**
   * A step test's job, on its flow's shard behind the runs waiting there: tried once (a test is
   * never retried) and gone from Redis once settled, since its caller has its answer by then.
   */
  async addTest(data: StepTestJobData): Promise<void> {
    this.#adds += 1;
    try {
      await this.#shardOf(data.flowId).add('test-step', data, {
        jobId: data.testId,
        attempts: 1,
        removeOnComplete: true,
        removeOnFail: true,
      });
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the run queue is unavailable; try again shortly', {
        cause: error,
      });
    }
  }

  /**
   * Which of these runs have no job in Redis, in any state (one pipelined round trip per shard:
   * on a cluster a pipeline stays within one slot): their job was lost (Redis restarted empty, a
   * failover dropped it) or never written. `jobId`: a resumed run's job (runJobId); its run id
   * otherwise. Answers run ids.
   */
  async missing(runs: ReadonlyArray<{ id: string; flowId: string; jobId?: string }>): Promise<Set<string>> {
    const byShard = new Map<Queue<QueuedJobData>, Array<{ runId: string; jobId: string }>>();
    for (const run of runs) {
      const shard = this.#shardOf(run.flowId);
      byShard.set(shard, [...(byShard.get(shard) ?? []), { runId: run.id, jobId: run.jobId ?? run.id }]);
    }
    const missing = new Set<string>();
    await Promise.all(
      [...byShard].map(async ([shard, jobs]) => {
        const replies = await this.#connection
          .pipeline(jobs.map((job) => ['exists', shard.toKey(job.jobId)]))
          .exec();
        jobs.forEach((job, index) => {
          const [error, exists] = replies?.[index] ?? [new Error('no reply'), null];
          if (error !== null) throw error;
          if (exists === 0) missing.add(job.runId);
        });
      }),
    );
    return missing;
  }

  /**
   * Which of these jobs Redis holds and has not finished (waiting, delayed, running, or back for
   * a retry), in one pipelined round trip per shard; answers run ids. A paused run whose due
   * resume job is among them is on its way (behind a backlog, or its flow at its cap).
   */
  async unfinished(jobs: ReadonlyArray<{ id: string; flowId: string; jobId: string }>): Promise<Set<string>> {
    const byShard = new Map<Queue<QueuedJobData>, Array<{ runId: string; jobId: string }>>();
    for (const job of jobs) {
      const shard = this.#shardOf(job.flowId);
      byShard.set(shard, [...(byShard.get(shard) ?? []), { runId: job.id, jobId: job.jobId }]);
    }
    const unfinished = new Set<string>();
    await Promise.all(
      [...byShard].map(async ([shard, shardJobs]) => {
        // Every job's hash has `timestamp`; `finishedOn` once it completed or failed for good.
        const replies = await this.#connection
          .pipeline(shardJobs.map((job) => ['hmget', shard.toKey(job.jobId), 'timestamp', 'finishedOn']))
          .exec();
        shardJobs.forEach((job, index) => {
          const [error, fields] = replies?.[index] ?? [new Error('no reply'), null];
          if (error !== null) throw error;
          const [timestamp, finishedOn] = Array.isArray(fields) ? fields : [null, null];
          if (timestamp != null && finishedOn == null) unfinished.add(job.runId);
        });
      }),
    );
    return unfinished;
  }

  /** Jobs by state over every shard, for the metrics. Prioritized jobs are waiting too. */
  async counts(): Promise<{ waiting: number; active: number; delayed: number }> {
    const shards = await Promise.all(
      this.#shards.map((shard) => shard.getJobCounts('waiting', 'prioritized', 'active', 'delayed')),
    );
    const total = { waiting: 0, active: 0, delayed: 0 };
    for (const counts of shards) {
      total.waiting += (counts.waiting ?? 0) + (counts.prioritized ?? 0);
      total.active += counts.active ?? 0;
      total.delayed += counts.delayed ?? 0;
    }
    return total;
  }

  /**
   * Runs waiting to start over every shard (one round trip per shard), for admission. Delayed jobs
   * are not counted: most are paused runs' resumes, due up to RUN_MAX_PAUSE_DAYS out (the rest,
   * retries a second out and runs postponed at their flow's cap, are back within a second).
   */
  async waiting(): Promise<number> {
    const counts = await Promise.all(
      this.#shards.map(async (shard) => {
        const byState = await shard.getJobCounts('waiting', 'paused', 'prioritized');
        return (byState.waiting ?? 0) + (byState.paused ?? 0) + (byState.prioritized ?? 0);
      }),
    );
    return counts.reduce((sum, count) => sum + count, 0);
  }

  /**
   * Removes a job that waits (its run ended before it started); false when it is leased. Asks
   * every shard (the caller knows the run, not its flow; this is a rare path).
   */
  async remove(jobId: string): Promise<boolean> {
    const removed = await Promise.all(this.#shards.map((shard) => shard.remove(jobId)));
    return removed.some((count) => count === 1);
  }

  async close(): Promise<void> {
    await Promise.all(this.#shards.map((shard) => shard.close()));
  }

  #shardOf(flowId: string): Queue<QueuedJobData> {
    const shard = this.#shards[shardOf(flowId, this.#shards.length)];
    if (shard === undefined) throw new Error('no run queue shard');
    return shard;
  }
}
