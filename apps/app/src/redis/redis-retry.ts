import pRetry from 'p-retry';
import { isRedisConnectionError } from './redis-outage.ts';

/**
 * How long a command is retried while Redis cannot be reached: a Redis Cluster promotes a
 * replica within seconds.
 */
export const REDIS_FAILOVER_MS = 5_000;

export interface RedisRetryOptions {
  /** The wait between attempts. */
  everyMs: number;
  /** Gives up after this long (the last error rejects); unset, retries until `signal` aborts. */
  forMs?: number;
  /** Which failures are retried; by default those that say Redis cannot be reached. */
  retryIf?: (error: Error) => boolean;
  /** Ends the retries: the promise rejects with the abort reason. */
  signal?: AbortSignal;
  /** Told of each failure that is retried. */
  onRetry?: (error: Error) => void;
}

/**
 * Runs `attempt`, and again every `everyMs` while it fails with an error `retryIf` accepts (Redis
 * unreachable by default), for up to `forMs`; rejects with the first error not retried. The one
 * retry loop for Redis commands in the app.
 */
export async function retryRedis<T>(attempt: () => Promise<T>, options: RedisRetryOptions): Promise<T> {
  const retryIf = options.retryIf ?? isRedisConnectionError;
  // p-retry never retries a TypeError; here `retryIf` alone decides, so one travels wrapped.
  const wrapped = async () => {
    try {
      return await attempt();
    } catch (error) {
      throw error instanceof TypeError ? new WrappedTypeError(error) : error;
    }
  };
  try {
    return await pRetry(wrapped, {
      retries: Number.POSITIVE_INFINITY,
      factor: 1,
      minTimeout: options.everyMs,
      maxRetryTime: options.forMs ?? Number.POSITIVE_INFINITY,
      signal: options.signal,
      // Asked before a retry is scheduled; false rejects with the error at once.
      shouldRetry: ({ error }) => {
        const original = unwrap(error);
        if (!retryIf(original)) return false;
        options.onRetry?.(original);
        return true;
      },
    });
  } catch (error) {
    throw unwrap(error);
  }
}

class WrappedTypeError extends Error {
  readonly original: TypeError;

  constructor(original: TypeError) {
    super(original.message);
    this.original = original;
  }
}

function unwrap<E>(error: E): E | TypeError {
  return error instanceof WrappedTypeError ? error.original : error;
}
