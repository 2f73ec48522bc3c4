import type { RunJobData } from '@flowbox/protocol';
import { FlowboxError } from '@flowbox/protocol';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

export const RUN_QUEUE_NAME = 'runs';
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
 * the add.
 */
export class RunQueue {
  readonly #queue: Queue<RunJobData>;
  readonly #connection: Redis;

  readonly #maxAttempts: number;

  constructor(options: { connection: Redis; prefix: string; maxAttempts: number }) {
    this.#maxAttempts = options.maxAttempts;
    this.#connection = options.connection;
    this.#queue = new Queue<RunJobData>(RUN_QUEUE_NAME, {
      connection: options.connection,
      prefix: options.prefix,
    });
  }

  /** `rank`: the run's place in its flow's queue (1: none of its flow waits before it). */
  async add(data: RunJobData, rank = 1): Promise<void> {
    try {
      await this.#queue.add('run', data, {
        jobId: data.runId,
        priority: Math.min(Math.max(1, rank), MAX_PRIORITY),
        // Retries are for crashes only (Dispatcher.conclude); a second later, not at once, so a
        // crash that takes the worker's machine down is not retried into the same state.
        attempts: this.#maxAttempts,
        backoff: { type: 'fixed', delay: 1_000 },
        removeOnComplete: { count: 1000 },
        // Failed jobs hold their trigger bodies: kept a day for inspection, and never more than
        // a bounded number of them, so a burst of failures cannot fill Redis.
        removeOnFail: { age: 24 * 3600, count: 1000 },
      });
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the run queue is unavailable; try again shortly', {
        cause: error,
      });
    }
  }

  /**
   * Which of these runs have no job in Redis, in any state (one pipelined round trip): their
   * job was lost (Redis restarted empty, a failover dropped it) or never written.
   */
  async missing(runIds: readonly string[]): Promise<Set<string>> {
    if (runIds.length === 0) return new Set();
    const replies = await this.#connection
      .pipeline(runIds.map((runId) => ['exists', this.#queue.toKey(runId)]))
      .exec();
    const missing = new Set<string>();
    runIds.forEach((runId, index) => {
      const [error, exists] = replies?.[index] ?? [new Error('no reply'), null];
      if (error !== null) throw error;
      if (exists === 0) missing.add(runId);
    });
    return missing;
  }

  /** Jobs by state (one Redis round trip), for the metrics. Prioritized jobs are waiting too. */
  async counts(): Promise<{ waiting: number; active: number; delayed: number }> {
    const counts = await this.#queue.getJobCounts('waiting', 'prioritized', 'active', 'delayed');
    return {
      waiting: (counts.waiting ?? 0) + (counts.prioritized ?? 0),
      active: counts.active ?? 0,
      delayed: counts.delayed ?? 0,
    };
  }

  /** Removes a job that waits (its run ended before it started); false when it is leased. */
  async remove(jobId: string): Promise<boolean> {
    return (await this.#queue.remove(jobId)) === 1;
  }

  async close(): Promise<void> {
    await this.#queue.close();
  }
}
