import type { Logger } from '@flowbox/node-kit';
import { createRedisClient, isCluster, type RedisClient } from './redis-clients.ts';
import { RedisOutage } from './redis-outage.ts';

/**
 * The app's three Redis connections, each shaped for its use, and the one outage watch over
 * them. All are lazy: nothing connects before `connect()` (or BullMQ's first command).
 */
export class AppRedis {
  /** Webhooks must fail fast (503) when Redis is down, so this one never queues commands offline. */
  readonly producer: RedisClient;
  /** Sync answers' channel: sharded subscriptions on a cluster. */
  readonly subscriber: RedisClient;
  /** The broker's blocking reads; waits and reconnects on its own. */
  readonly broker: RedisClient;
  /** On a cluster every queue shard's keys carry a hash tag and the sync channel is sharded. */
  readonly cluster: boolean;
  /** An outage is logged once each way, not per reconnect attempt or refused webhook. */
  readonly outage: RedisOutage;

  constructor(url: string, logger: Logger) {
    this.producer = createRedisClient(url, { enableOfflineQueue: false, maxRetriesPerRequest: 1 });
    this.subscriber = createRedisClient(url, { maxRetriesPerRequest: null, shardedSubscriber: true });
    this.broker = createRedisClient(url, { maxRetriesPerRequest: null });
    this.cluster = isCluster(this.producer);
    this.outage = new RedisOutage(logger.child({ component: 'redis' }));
    for (const [name, client] of Object.entries(this.#named())) this.outage.watch(name, client);
  }

  async connect(): Promise<void> {
    await Promise.all(Object.values(this.#named()).map(connectRedis));
  }

  /** Last at shutdown: closing connections on purpose is not an outage. */
  disconnect(): void {
    this.outage.close();
    for (const client of Object.values(this.#named())) client.disconnect();
  }

  #named(): Record<string, RedisClient> {
    return { producerRedis: this.producer, subscriberRedis: this.subscriber, brokerRedis: this.broker };
  }
}

/** Connects a lazy client, or waits for one that something (BullMQ) already began connecting. */
async function connectRedis(client: RedisClient): Promise<void> {
  if (client.status === 'ready') return;
  if (client.status === 'wait') {
    await client.connect();
    return;
  }
  await new Promise<void>((resolve, reject) => {
    client.once('ready', resolve);
    client.once('end', () => reject(new Error('redis connection ended before it was ready')));
  });
}
