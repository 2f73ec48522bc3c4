import type { LeasedJob } from './leased-job.ts';
import type { PollClaim } from './waiting-polls.ts';

/**
 * How a worker's next job reaches it: the one port the worker gateway and the webhooks' hand-off
 * use (JobBroker implements it over BullMQ; docs/architecture.md draws the protocol). A job takes
 * one of three paths, each switchable:
 *
 * - direct hand-off (QUEUE_DIRECT_HANDOFF): a run being accepted while a worker's poll waits and
 *   the queue is drained goes to that poll (`claim` before its row is written, or `offer`);
 * - with the result (QUEUE_NEXT_WITH_RESULT): a finished job's completion leases the next waiting
 *   job in the same call (`LeasedJob.complete({ fetchNext })`; `nextWaiting` after a direct one);
 * - held (QUEUE_HELD_RUNS_MAX): a run accepted while this app's workers are all busy waits in
 *   the app's memory for the next of them to finish (`hold`), behind the jobs queued before it,
 *   for at most HELD_RUN_MAX_MS before it is queued;
 * - fetch: a poll waits in line, served from BullMQ by one blocking fetch per app (`next`).
 */
export interface JobSource {
  /** Every shard has a blocking fetch out: each was found empty, and no job has reached it since. */
  readonly drained: boolean;
  /** A held run waits and the queue is known empty: the next job costs no Redis call. */
  readonly heldReady: boolean;
  /** Polls waiting for a job: idle workers of this app. */
  readonly waitingPolls: number;
  /** The next job for `workerId`, or null when none came within `timeoutMs` or `signal` aborted. */
  next(timeoutMs: number, signal: AbortSignal, workerId: string): Promise<LeasedJob | null>;
  /** Gives the lease `make` builds to the oldest waiting poll, when one waits and the queue is drained. */
  offer(make: () => LeasedJob): boolean;
  /** Holds the lease `make` builds for this app's next worker to finish, when no poll waits. */
  hold(make: () => LeasedJob, rank: number): boolean;
  /** Ends the held run of `jobId` (its run ended before it started); false when none is held. */
  dropHeld(jobId: string): boolean;
  /** Sets the oldest waiting poll aside for a run about to be accepted, on the terms of `offer`. */
  claim(): PollClaim | null;
  /** The next waiting job, leased, for a worker that finished one handed to it directly. */
  nextWaiting(): Promise<LeasedJob | null>;
}
