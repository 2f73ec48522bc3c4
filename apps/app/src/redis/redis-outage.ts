import type { Logger } from '@flowbox/node-kit';
import type { RedisClient } from './redis-clients.ts';

const CONNECTION_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EPIPE',
  'ETIMEDOUT',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
]);
const CONNECTION_MESSAGES =
  /Connection is closed|Stream isn't writeable|enableOfflineQueue|Reached the max retries|max retries per request|Socket closed unexpectedly|LOADING Redis is loading|CLUSTERDOWN|TRYAGAIN|Too many Cluster redirections|Failed to refresh slots cache|None of startup nodes is available|Cluster isn't ready/i;

/** True for an error that says Redis cannot be reached (not that a command failed). */
export function isRedisConnectionError(error: unknown): boolean {
  for (let at: unknown = error, depth = 0; at !== null && typeof at === 'object' && depth < 5; depth++) {
    const { code, message, cause } = at as { code?: unknown; message?: unknown; cause?: unknown };
    if (typeof code === 'string' && CONNECTION_CODES.has(code)) return true;
    if (typeof message === 'string' && CONNECTION_MESSAGES.test(message)) return true;
    at = cause;
  }
  return false;
}

/**
 * Tells when Redis is down, once: a warning when the first connection loses it and one line when
 * every connection has it back, with how long it was gone. The connections' own errors (one per
 * reconnect attempt) go to debug. Webhooks answer 503 meanwhile without a log line each.
 */
export class RedisOutage {
  readonly #logger: Logger;
  /** Connections that lost Redis and are not ready again. */
  readonly #lost = new Set<string>();
  #since: number | null = null;
  #closing = false;

  constructor(logger: Logger) {
    this.#logger = logger;
  }

  /** True from the first lost connection until all of them are ready again. */
  get down(): boolean {
    return this.#since !== null;
  }

  /** Follows a connection: errors and closes count as lost, `ready` as back. */
  watch(name: string, client: RedisClient): void {
    client.on('error', (error: Error) => this.#lose(name, error));
    client.on('close', () => this.#lose(name, null));
    client.on('ready', () => this.#regain(name));
  }

  /** For errors seen elsewhere (BullMQ's own connections): true when they mean Redis is down. */
  readonly isOutage = (error: unknown): boolean => this.down || isRedisConnectionError(error);

  /** At shutdown: connections closing on purpose are not an outage. */
  close(): void {
    this.#closing = true;
  }

  #lose(name: string, error: Error | null): void {
    if (this.#closing) return;
    if (error !== null && !isRedisConnectionError(error)) {
      this.#logger.warn({ err: error, connection: name }, 'redis connection error');
      return;
    }
    this.#lost.add(name);
    if (this.#since !== null) {
      if (error !== null) this.#logger.debug({ connection: name, reason: error.message }, 'redis still down');
      return;
    }
    this.#since = Date.now();
    this.#logger.warn(
      { connection: name, reason: error?.message ?? 'connection closed' },
      'redis is unavailable: webhooks answer 503 QUEUE_UNAVAILABLE until it is back',
    );
  }

  #regain(name: string): void {
    this.#lost.delete(name);
    if (this.#since === null || this.#lost.size > 0) return;
    const downForMs = Date.now() - this.#since;
    this.#since = null;
    this.#logger.warn({ downForMs }, 'redis is available again');
  }
}
