import type { Logger } from '@flowbox/node-kit';
import { FlowboxError } from '@flowbox/protocol';
import { Queue, Worker } from 'bullmq';
import { z } from 'zod';
import type { RedisClient } from '../redis/redis-clients.ts';

/** The delayed jobs that resume paused runs on time: `<prefix>:timers` (`{timers}` on a cluster). */
export const TIMER_QUEUE_NAME = 'timers';

/** Timers fired at once by one app: each is one conditional UPDATE and one enqueue. */
const CONCURRENCY = 8;

const TimerJobSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  /** The pause it was set for (runs.resumes then): a timer of an older pause resumes nothing. */
  resumes: z.number().int().nonnegative(),
});
export type TimerJob = z.infer<typeof TimerJobSchema>;

/**
 * The timers of paused runs, one delayed BullMQ job per pause (`timer:<runId>:<resumes>`), fired
 * by whichever app's worker takes it. Redis is transport only: a timer it loses is found by the
 * reconciler in `run_waits` (RunReconciler), and a timer that fires twice resumes once (the
 * resume is a conditional UPDATE).
 */
export class TimerQueue {
  readonly #queue: Queue<TimerJob>;
  readonly #name: string;
  readonly #prefix: string;
  readonly #logger: Logger;
  #worker: Worker<TimerJob> | null = null;
  #workerConnection: RedisClient | null = null;

  constructor(options: { connection: RedisClient; prefix: string; cluster: boolean; logger: Logger }) {
    this.#name = options.cluster ? `{${TIMER_QUEUE_NAME}}` : TIMER_QUEUE_NAME;
    this.#prefix = options.prefix;
    this.#logger = options.logger;
    this.#queue = new Queue<TimerJob>(this.#name, { connection: options.connection, prefix: options.prefix });
    // A queue closed before its connection was ready emits the refused version check here;
    // unheard, it would be an unhandled rejection. `set` reports real failures.
    this.#queue.on('error', (error) => this.#logger.debug({ err: error }, 'timer queue error'));
  }

  /** Fires `runId`'s timer in `delayMs` (a second add for the same pause is a no-op). */
  async set(runId: string, resumes: number, delayMs: number): Promise<void> {
    try {
      await this.#queue.add(
        'timer',
        { version: 1, runId, resumes },
        {
          jobId: `timer:${runId}:${resumes}`,
          delay: Math.max(0, Math.ceil(delayMs)),
          removeOnComplete: true,
          removeOnFail: { age: 24 * 3600, count: 1000 },
          attempts: 3,
          backoff: { type: 'fixed', delay: 1_000 },
        },
      );
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the timer queue is unavailable', { cause: error });
    }
  }

  /**
   * Takes timers as they come due, on a connection of its own (a BullMQ worker blocks on it).
   * `fire` resumes the run; a throw retries the timer a second later.
   */
  start(brokerConnection: RedisClient, fire: (timer: TimerJob) => Promise<void>): void {
    this.#workerConnection = brokerConnection.duplicate();
    this.#worker = new Worker<TimerJob>(
      this.#name,
      async (job) => {
        const parsed = TimerJobSchema.safeParse(job.data);
        if (!parsed.success) {
          this.#logger.error({ jobId: job.id }, 'dropped a timer job with invalid data');
          return;
        }
        await fire(parsed.data);
      },
      { connection: this.#workerConnection, prefix: this.#prefix, concurrency: CONCURRENCY },
    );
    this.#worker.on('error', (error) => this.#logger.debug({ err: error }, 'timer worker error'));
  }

  /** Delayed timers waiting in Redis (for tests and metrics). */
  delayed(): Promise<number> {
    return this.#queue.getDelayedCount();
  }

  async close(): Promise<void> {
    // A worker closed while its connections still start leaves their version checks to fail
    // unheard when the connections drop; once ready, it closes cleanly. (With Redis down the
    // app's close bounds this wait.)
    await this.#worker?.waitUntilReady().catch(() => undefined);
    await this.#worker?.close();
    this.#workerConnection?.disconnect();
    await this.#queue.close();
  }
}
