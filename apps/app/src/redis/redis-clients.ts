import { Cluster, Redis, type RedisOptions } from 'ioredis';
import { parseRedisTarget, type RedisTarget } from './redis-target.ts';

/** A connection to a single Redis or to a Redis Cluster; BullMQ and the stores take either. */
export type RedisClient = Redis | Cluster;

export interface RedisClientOptions {
  /** false: a command fails at once while disconnected instead of waiting (webhooks answer 503). */
  enableOfflineQueue?: boolean;
  /** null: retry for ever (BullMQ's blocking connections need it). */
  maxRetriesPerRequest: number | null;
  /** Subscribes to sharded channels (SSUBSCRIBE): one subscriber connection per primary. */
  shardedSubscriber?: boolean;
  /** Give up at the first failure (the start-up check). */
  noReconnect?: boolean;
  connectTimeoutMs?: number;
}

/** A lazy client (nothing connects until `connect()` or its first command) for REDIS_URL. */
export function createRedisClient(url: string, options: RedisClientOptions): RedisClient {
  const target = parseRedisTarget(url);
  if (target === null) throw new Error('REDIS_URL is not a redis:// or redis+cluster:// URL');
  const nodeOptions: RedisOptions = {
    lazyConnect: true,
    maxRetriesPerRequest: options.maxRetriesPerRequest,
    ...(options.enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
    ...(options.connectTimeoutMs === undefined ? {} : { connectTimeout: options.connectTimeoutMs }),
    ...(options.noReconnect === true ? { retryStrategy: () => null } : {}),
  };
  if (target.kind === 'single') return new Redis(target.url, nodeOptions);
  return new Cluster(target.nodes, {
    lazyConnect: true,
    ...(options.enableOfflineQueue === false ? { enableOfflineQueue: false } : {}),
    ...(options.noReconnect === true ? { clusterRetryStrategy: () => null } : {}),
    shardedSubscribers: options.shardedSubscriber === true,
    redisOptions: { ...nodeOptions, ...credentials(target) },
  });
}

export function isCluster(client: RedisClient): client is Cluster {
  return client instanceof Cluster;
}

function credentials(target: Extract<RedisTarget, { kind: 'cluster' }>): RedisOptions {
  return {
    ...(target.username === undefined ? {} : { username: target.username }),
    ...(target.password === undefined ? {} : { password: target.password }),
    ...(target.tls ? { tls: {} } : {}),
  };
}
