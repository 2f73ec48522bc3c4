import type { Logger } from '@flowbox/node-kit';
import { type Deferred, defer } from '@flowbox/node-kit';
import {
  parseMessage,
  type SyncMessage,
  SyncMessageSchema,
  syncBroadcastChannelName,
  syncChannelName,
} from '@flowbox/protocol';
import type { RedisClient } from '../redis/redis-clients.ts';
import { isRedisConnectionError } from '../redis/redis-outage.ts';
import { REDIS_FAILOVER_MS, retryRedis } from '../redis/redis-retry.ts';

/** The wait between tries to publish an answer for another app while Redis cannot take it. */
const PUBLISH_RETRY_STEP_MS = 250;

export type SyncOutcome =
  | SyncMessage
  | { type: 'timeout'; runId: string }
  | { type: 'shutdown'; runId: string }
  /** The caller disconnected before its answer came. */
  | { type: 'caller-gone'; runId: string };

export interface SyncWaiter {
  /**
   * Resolves with the run's answer, `timeout` after `timeoutMs`, or `caller-gone` when
   * `callerGone` aborts. Never rejects.
   */
  wait(timeoutMs: number, callerGone?: AbortSignal): Promise<SyncOutcome>;
  cancel(): void;
}

/**
 * Connects sync webhook callers to their run's answer. Every app instance subscribes to its own
 * channel; whichever instance learns the answer publishes it there. An answer for this very
 * instance is delivered in-process, without a Redis round trip.
 */
export class SyncResponseHub {
  /** The callers waiting for each run: one, or more when they repeated its idempotency key. */
  readonly #waiters = new Map<string, Set<Deferred<SyncOutcome>>>();
  /** Resolved when no caller waits any more (`idle`). */
  #onIdle: Array<() => void> = [];
  #closed = false;
  readonly #publisher: RedisClient;
  readonly #subscriber: RedisClient;
  readonly #sharded: boolean;
  readonly #prefix: string;
  readonly #instanceId: string;
  readonly #logger: Logger;

  constructor(options: {
    publisher: RedisClient;
    subscriber: RedisClient;
    /**
     * Sharded pub/sub (SSUBSCRIBE, SPUBLISH; Redis 7): on a cluster a message goes only to the
     * node that holds its channel's slot, where plain PUBLISH is copied to every node.
     */
    sharded?: boolean;
    prefix: string;
    instanceId: string;
    logger: Logger;
  }) {
    this.#publisher = options.publisher;
    this.#subscriber = options.subscriber;
    this.#sharded = options.sharded ?? false;
    this.#prefix = options.prefix;
    this.#instanceId = options.instanceId;
    this.#logger = options.logger;
  }

  get instanceId(): string {
    return this.#instanceId;
  }

  async start(): Promise<void> {
    const channel = syncChannelName(this.#prefix, this.#instanceId);
    const broadcast = syncBroadcastChannelName(this.#prefix);
    if (this.#sharded) {
      this.#subscriber.on('smessage', (_channel: string, raw: string) => this.#onMessage(raw));
      // One by one: on a cluster the two channels may live in different slots.
      await this.#subscriber.ssubscribe(channel);
      await this.#subscriber.ssubscribe(broadcast);
      return;
    }
    this.#subscriber.on('message', (_channel: string, raw: string) => this.#onMessage(raw));
    await this.#subscriber.subscribe(channel, broadcast);
  }

  /**
   * Register before the run is enqueued, so a fast answer cannot arrive before anyone listens.
   * Several callers may wait for one run (repeats of its idempotency key): each gets the answer.
   */
  register(runId: string): SyncWaiter {
    const deferred = defer<SyncOutcome>();
    // A webhook that came in while the app closes: its run goes on, its caller is told so.
    if (this.#closed) deferred.resolve({ type: 'shutdown', runId });
    else {
      const waiting = this.#waiters.get(runId);
      if (waiting === undefined) this.#waiters.set(runId, new Set([deferred]));
      else waiting.add(deferred);
    }
    return {
      wait: async (timeoutMs, callerGone) => {
        const timer = setTimeout(() => deferred.resolve({ type: 'timeout', runId }), timeoutMs);
        const onGone = () => deferred.resolve({ type: 'caller-gone', runId });
        if (callerGone?.aborted === true) onGone();
        callerGone?.addEventListener('abort', onGone, { once: true });
        try {
          return await deferred.promise;
        } finally {
          clearTimeout(timer);
          callerGone?.removeEventListener('abort', onGone);
          this.#forget(runId, deferred);
        }
      },
      cancel: () => {
        this.#forget(runId, deferred);
      },
    };
  }

  /**
   * A run's answer for every instance's callers of it (repeats of its idempotency key): delivered
   * here at once, and to the other instances over Redis. Given up with a log line when Redis
   * cannot carry it: those callers are answered 504 with the run id.
   */
  async broadcast(message: SyncMessage): Promise<void> {
    this.#deliver(message);
    try {
      await this.#send(syncBroadcastChannelName(this.#prefix), JSON.stringify(message));
    } catch (error) {
      if (!isRedisConnectionError(error)) throw error;
      this.#logger.warn(
        { err: error, runId: message.runId },
        "gave up a sync answer for a run's repeated callers: Redis could not carry it; they get 504",
      );
    }
  }

  async publish(instanceId: string, message: SyncMessage): Promise<void> {
    if (instanceId === this.#instanceId) {
      this.#deliver(message);
      return;
    }
    const channel = syncChannelName(this.#prefix, instanceId);
    try {
      await this.#send(channel, JSON.stringify(message));
    } catch (error) {
      if (!isRedisConnectionError(error)) throw error;
      this.#logger.warn(
        { err: error, runId: message.runId, instanceId },
        'gave up a sync answer: Redis could not carry it; its caller gets 504',
      );
    }
  }

  /**
   * A channel's node may be failing over (a Redis Cluster promotes a replica within seconds):
   * try again for a while, then give the answer up rather than fail the run it belongs to; its
   * caller is answered 504 with the run id, and the run goes on (docs/operations.md).
   */
  async #send(channel: string, raw: string): Promise<void> {
    const send = () =>
      this.#sharded ? this.#publisher.spublish(channel, raw) : this.#publisher.publish(channel, raw);
    await retryRedis(send, {
      everyMs: PUBLISH_RETRY_STEP_MS,
      forMs: REDIS_FAILOVER_MS,
      retryIf: (error) => isRedisConnectionError(error) && !this.#closed,
    });
  }

  /** Sync callers this instance holds, waiting for their answer. */
  get waiting(): number {
    let callers = 0;
    for (const waiting of this.#waiters.values()) callers += waiting.size;
    return callers;
  }

  /** Resolves once no caller waits (at shutdown: the callers still waiting get their real answers). */
  idle(): Promise<void> {
    if (this.#waiters.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#onIdle.push(resolve));
  }

  /** Answers every waiting caller with `shutdown`; their runs go on and stay readable. */
  async close(): Promise<void> {
    this.#closed = true;
    for (const [runId, waiting] of this.#waiters) {
      for (const deferred of waiting) deferred.resolve({ type: 'shutdown', runId });
    }
    this.#waiters.clear();
    const channel = syncChannelName(this.#prefix, this.#instanceId);
    // By name: ioredis's cluster cannot route a SUNSUBSCRIBE without one (it throws).
    if (this.#sharded) {
      await this.#subscriber.sunsubscribe(channel).catch(() => {});
      await this.#subscriber.sunsubscribe(syncBroadcastChannelName(this.#prefix)).catch(() => {});
    } else await this.#subscriber.unsubscribe().catch(() => {});
  }

  #forget(runId: string, deferred: Deferred<SyncOutcome>): void {
    const waiting = this.#waiters.get(runId);
    waiting?.delete(deferred);
    if (waiting?.size === 0) this.#waiters.delete(runId);
    if (this.#waiters.size > 0) return;
    for (const resolve of this.#onIdle.splice(0)) resolve();
  }

  #onMessage(raw: string): void {
    let frame: unknown;
    try {
      frame = JSON.parse(raw);
    } catch {
      this.#logger.warn('dropped a sync message that is not JSON');
      return;
    }
    const parsed = parseMessage(SyncMessageSchema, frame);
    if (!parsed.ok) {
      this.#logger.warn({ reason: parsed.error }, 'dropped an invalid sync message');
      return;
    }
    this.#deliver(parsed.value);
  }

  #deliver(message: SyncMessage): void {
    // No waiter: the caller already got an answer (or timed out); later messages are moot.
    for (const deferred of this.#waiters.get(message.runId) ?? []) deferred.resolve(message);
  }
}
