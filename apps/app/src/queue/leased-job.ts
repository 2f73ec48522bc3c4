import type { QueuedJobData } from '@flowbox/protocol';

/** A job taken from the queue for one worker; the app holds its lock until the result. */
export interface LeasedJob {
  jobId: string;
  /** A run's job, or a step test's (step-test.ts in the protocol). */
  data: QueuedJobData;
  /** 1 for the job's first start, 2 for its first retry, and so on. */
  attempt: number;
  /**
   * The run is RUNNING under this lease already: it was handed to an idle worker as it was
   * accepted, and its row was written so (RunHandoff.reserve). Its dispatch writes no start.
   */
  started?: boolean;
  /** It was held in its app for the app's busy workers (JobBroker.hold): taken with no Redis call. */
  held?: boolean;
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
