import type { Logger } from '@flowbox/node-kit';
import { FlowboxError, httpStatusOf } from '@flowbox/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import type { ErrorBody } from './error-handler.ts';

export interface ApiKeyFailureSettings {
  /** API_KEY_MAX_FAILURES: wrong keys an address may send in a window before 429. */
  maxFailures: number;
  /** API_KEY_FAILURE_WINDOW_SECONDS. */
  windowSeconds: number;
}

/** One wrong key counted: `exceeded` once the address passed the limit in its window. */
interface Counted {
  /** Its address's wrong keys in the window, this one included; null past the limit or uncounted. */
  failures: number | null;
  exceeded: boolean;
  retryAfterSeconds: number;
}

/**
 * Wrong API keys, counted per source address by @fastify/rate-limit in Redis (every app shares
 * the count): 401 up to API_KEY_MAX_FAILURES in a window, then 429 `API_KEY_RATE_LIMITED` with
 * `retry-after`. Only wrong keys reach this: the right key is never counted nor refused. Each
 * is counted in `flowbox_api_key_refused_total`; an address's first wrong key in a window and
 * the one that reaches the limit are logged, so a flood of guesses writes two lines an address.
 */
export class ApiKeyFailures {
  readonly #count: (request: FastifyRequest) => Promise<Counted>;
  readonly #metrics: AppMetrics;
  readonly #logger: Logger;
  readonly #settings: ApiKeyFailureSettings;

  private constructor(
    count: (request: FastifyRequest) => Promise<Counted>,
    options: { metrics: AppMetrics; logger: Logger; settings: ApiKeyFailureSettings },
  ) {
    this.#count = count;
    this.#metrics = options.metrics;
    this.#logger = options.logger;
    this.#settings = options.settings;
  }

  /**
   * Counts wrong keys through a limiter of `scope`'s `@fastify/rate-limit` (registered there with
   * `global: false`, so it limits no route by itself).
   */
  static create(
    scope: FastifyInstance,
    options: { metrics: AppMetrics; logger: Logger; settings: ApiKeyFailureSettings },
  ): ApiKeyFailures {
    const limit = scope.createRateLimit({
      max: options.settings.maxFailures,
      timeWindow: options.settings.windowSeconds * 1000,
    });
    return new ApiKeyFailures(async (request) => {
      const outcome = await limit(request);
      if (outcome.isAllowed) return { failures: null, exceeded: false, retryAfterSeconds: 0 };
      return {
        failures: outcome.isExceeded ? null : outcome.max - outcome.remaining,
        exceeded: outcome.isExceeded,
        retryAfterSeconds: Math.max(1, outcome.ttlInSeconds),
      };
    }, options);
  }

  /** Answers a wrong key: throws 401, or sends 429 once its address is past the limit. */
  async refuse(request: FastifyRequest, reply: FastifyReply): Promise<FastifyReply> {
    let counted: Counted;
    try {
      counted = await this.#count(request);
    } catch {
      // Redis unreachable: not counted (the outage is logged by its own watch), still refused.
      counted = { failures: null, exceeded: false, retryAfterSeconds: 0 };
    }
    const address = request.ip;
    const { maxFailures, windowSeconds } = this.#settings;
    if (counted.failures === 1) {
      this.#logger.warn({ address, url: request.url }, 'wrong API key');
    }
    if (counted.failures === maxFailures) {
      this.#logger.warn(
        { address, failures: maxFailures, windowSeconds, retryAfterSeconds: counted.retryAfterSeconds },
        'wrong API keys from this address reached API_KEY_MAX_FAILURES; further wrong keys are answered 429 until the window ends',
      );
    }
    if (!counted.exceeded) {
      this.#metrics.apiKeyRefused(401);
      throw new FlowboxError('UNAUTHORIZED', 'wrong API key');
    }
    this.#metrics.apiKeyRefused(429);
    const body: ErrorBody = {
      error: {
        code: 'API_KEY_RATE_LIMITED',
        message: `too many wrong API keys from this address; try again in ${counted.retryAfterSeconds} s`,
      },
    };
    return reply
      .status(httpStatusOf(body.error.code))
      .header('retry-after', String(counted.retryAfterSeconds))
      .send(body);
  }
}
