import type { Logger } from '@flowbox/node-kit';
import { FlowboxError, httpStatusOf } from '@flowbox/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import type { ErrorBody } from './error-handler.ts';

/** The secret a limiter counts wrong guesses of: named in its messages, counted by answer. */
export interface LimitedCredential {
  /** `API key`, `metrics token`: singular; messages add an `s`. */
  name: string;
  /** Counts each refusal (`flowbox_api_key_refused_total`, `flowbox_metrics_token_refused_total`). */
  refused(answer: 401 | 429): void;
}

export interface ApiKeyFailureSettings {
  /** API_KEY_MAX_FAILURES: wrong keys an address may send in a window before 429. */
  maxFailures: number;
  /** API_KEY_FAILURE_WINDOW_SECONDS. */
  windowSeconds: number;
}

interface FailureOptions {
  metrics: AppMetrics;
  logger: Logger;
  settings: ApiKeyFailureSettings;
  /** The API key's by default. */
  credential?: LimitedCredential;
}

/** One wrong key counted: `exceeded` once the address passed the limit in its window. */
interface Counted {
  /** Its address's wrong keys in the window, this one included; null past the limit or uncounted. */
  failures: number | null;
  exceeded: boolean;
  retryAfterSeconds: number;
}

/**
 * Wrong API keys (or metrics tokens: `credential`), counted per source address by
 * @fastify/rate-limit in Redis (every app shares the count): 401 up to API_KEY_MAX_FAILURES in a
 * window, then 429 `API_KEY_RATE_LIMITED` with `retry-after`. Only wrong ones reach this: the right
 * one is never counted nor refused. Each is counted (`credential.refused`); an address's first
 * wrong one in a window and the one that reaches the limit are logged, so a flood of guesses
 * writes two lines an address.
 */
export class ApiKeyFailures {
  readonly #count: (request: FastifyRequest) => Promise<Counted>;
  readonly #credential: LimitedCredential;
  readonly #logger: Logger;
  readonly #settings: ApiKeyFailureSettings;

  private constructor(count: (request: FastifyRequest) => Promise<Counted>, options: FailureOptions) {
    this.#count = count;
    this.#credential = options.credential ?? {
      name: 'API key',
      refused: (answer) => options.metrics.apiKeyRefused(answer),
    };
    this.#logger = options.logger;
    this.#settings = options.settings;
  }

  /**
   * Counts wrong keys through a limiter of `scope`'s `@fastify/rate-limit` (registered there with
   * `global: false`, so it limits no route by itself).
   */
  static create(scope: FastifyInstance, options: FailureOptions): ApiKeyFailures {
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
    const { name } = this.#credential;
    if (counted.failures === 1) {
      this.#logger.warn({ address, url: request.url }, `wrong ${name}`);
    }
    if (counted.failures === maxFailures) {
      this.#logger.warn(
        { address, failures: maxFailures, windowSeconds, retryAfterSeconds: counted.retryAfterSeconds },
        `wrong ${name}s from this address reached API_KEY_MAX_FAILURES; further wrong ${name}s are answered 429 until the window ends`,
      );
    }
    if (!counted.exceeded) {
      this.#credential.refused(401);
      throw new FlowboxError('UNAUTHORIZED', `wrong ${name}`);
    }
    this.#credential.refused(429);
    const body: ErrorBody = {
      error: {
        code: 'API_KEY_RATE_LIMITED',
        message: `too many wrong ${name}s from this address; try again in ${counted.retryAfterSeconds} s`,
      },
    };
    return reply
      .status(httpStatusOf(body.error.code))
      .header('retry-after', String(counted.retryAfterSeconds))
      .send(body);
  }
}
