import type { RunJobData } from '@flowbox/protocol';
import { FlowboxError } from '@flowbox/protocol';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';

export const RUN_QUEUE_NAME = 'runs';

/** The producer side of the run queue. One job per run; the job id is the run id. */
export class RunQueue {
  readonly #queue: Queue<RunJobData>;

  constructor(options: { connection: Redis; prefix: string }) {
    this.#queue = new Queue<RunJobData>(RUN_QUEUE_NAME, {
      connection: options.connection,
      prefix: options.prefix,
    });
  }

  async add(data: RunJobData): Promise<void> {
    try {
      await this.#queue.add('run', data, {
        jobId: data.runId,
        attempts: 1,
        removeOnComplete: { count: 1000 },
        removeOnFail: { age: 24 * 3600 },
      });
    } catch (error) {
      throw new FlowboxError('QUEUE_UNAVAILABLE', 'the run queue is unavailable; try again shortly', {
        cause: error,
      });
    }
  }

  async close(): Promise<void> {
    await this.#queue.close();
  }
}
