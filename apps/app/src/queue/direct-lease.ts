import type { RunJobData } from '@flowbox/protocol';
import type { LeasedJob } from './leased-job.ts';
import { RETRY_DELAY_MS, type RunQueue, runJobId } from './run-queue.ts';

/**
 * A job handed straight from its webhook to a worker of this app that was waiting for one
 * (RunHandoff): it never went through Redis, so nothing there holds or locks it. Its run's row
 * is its durable record, as a queued job's is: should this app die while a worker runs it, the
 * reconciler takes the run down the lost-worker path once its flow timeout has passed, and the
 * sweeper ends it after that (docs/architecture.md, "Who finalises").
 *
 * Whatever sends the run on again goes through the queue: a retry (one second later, its
 * attempts counted in `priorAttempts`), a run its worker never received, a run whose flow is at
 * its cap.
 */
export function directLease(
  data: RunJobData,
  rank: number,
  deps: {
    queue: Pick<RunQueue, 'add'>;
    /** The next waiting job for the same worker (JobBroker.nextWaiting). */
    nextWaiting: () => Promise<LeasedJob | null>;
    /** Its row was written RUNNING for its worker as the run was accepted. */
    started?: boolean;
  },
): LeasedJob {
  const { queue } = deps;
  const attempt = 1 + (data.priorAttempts ?? 0);
  // Nothing to settle in Redis: only the next job, when the worker wants one.
  const next = (options?: { fetchNext?: boolean }) =>
    options?.fetchNext === true ? deps.nextWaiting() : Promise.resolve(null);
  return {
    jobId: runJobId(data),
    data,
    attempt,
    ...(deps.started === true ? { started: true } : {}),
    complete: (options) => next(options),
    fail: async (_reason, options) => {
      if (options?.retry === true) {
        await queue.add({ ...data, priorAttempts: attempt }, rank, { delayMs: RETRY_DELAY_MS });
      }
      return next(options);
    },
    release: () => queue.add(data, rank),
    postpone: (ms) => queue.add(data, rank, { delayMs: ms }),
  };
}
