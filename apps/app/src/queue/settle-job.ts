import type { Logger } from '@flowbox/node-kit';
import { ErrorCode } from 'bullmq';
import { isRedisConnectionError } from '../redis/redis-outage.ts';
import { REDIS_FAILOVER_MS, retryRedis } from '../redis/redis-retry.ts';

/** The wait between tries to settle a job while Redis cannot be reached. */
const SETTLE_RETRY_STEP_MS = 250;

/** BullMQ's codes (on the error's `code`) for a job, or its lock, that Redis no longer holds. */
const JOB_GONE_CODES: ReadonlySet<unknown> = new Set([ErrorCode.JobNotExist, ErrorCode.JobLockNotExist]);
const isJobGone = (error: unknown): error is Error =>
  error instanceof Error && JOB_GONE_CODES.has((error as { code?: unknown }).code);

/**
 * Settles a leased BullMQ job, or does nothing when Redis no longer has it (it restarted empty,
 * or the reconciler enqueued the run again): the run's row, already written, is the truth; a
 * retry left QUEUED without a job is the reconciler's to enqueue again. Resolves with what
 * `settle` answered, null for a job gone.
 */
export async function settleUnlessGone(
  jobId: string,
  settle: () => Promise<unknown>,
  options: { retry: boolean; closed: () => boolean; logger: Logger },
): Promise<unknown> {
  // With `retry`, a job's node may be failing over (a Redis Cluster promotes a replica within
  // seconds): completing again is safe, one that did land answers JobLockNotExist the second time.
  try {
    if (!options.retry) return await settle();
    return await retryRedis(settle, {
      everyMs: SETTLE_RETRY_STEP_MS,
      forMs: REDIS_FAILOVER_MS,
      retryIf: (error) => isRedisConnectionError(error) && !options.closed(),
    });
  } catch (error) {
    if (!isJobGone(error)) throw error;
    options.logger.info(
      { jobId, reason: error.message },
      'settled a job Redis no longer holds; the run row stands',
    );
    return null;
  }
}
