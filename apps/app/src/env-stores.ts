import { envFields } from '@flowbox/node-kit';
import { z } from 'zod';
import { isRedisUrl } from './redis/redis-target.ts';

/** A bound on QUEUE_SHARDS: each shard costs every app a blocking Redis connection. */
const MAX_QUEUE_SHARDS = 64;

/** The app's settings for its stores: Postgres, Redis (and the run queue's shards) and S3. */
export const storeEnvFields = {
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .describe('Postgres connection URL. The first app to start applies the SQL migrations.'),
  DATABASE_POOL_SIZE: envFields
    .positiveInt(10)
    .describe("Postgres connections this app may hold; all apps' pools together must fit max_connections."),
  DATABASE_PREPARED_STATEMENTS: envFields
    .boolean(true)
    .describe(
      'Name the statements every run makes, so each connection has Postgres parse and plan them once. Set false behind a proxy that shares server sessions between clients (PgBouncer in transaction mode); `pnpm dev` sets it false for its embedded PGlite, which serves every connection from one session.',
    ),
  REDIS_URL: z
    .string()
    .regex(/^rediss?(\+cluster)?:\/\//, 'must be a redis:// or redis+cluster:// URL')
    .refine(isRedisUrl, 'a redis+cluster:// URL lists its seed nodes as host:port,host:port')
    .describe(
      'Redis connection URL (`rediss://` for TLS): the BullMQ queue and the sync-response pub/sub. A Redis Cluster (7 or later) is named by its seed nodes, `redis+cluster://[user:password@]host:port,host:port` (`rediss+cluster://` for TLS); see QUEUE_SHARDS and docs/operations.md.',
    ),
  QUEUE_SHARDS: z.coerce
    .number()
    .int()
    .min(1)
    .max(MAX_QUEUE_SHARDS)
    .default(1)
    .describe(
      "Run queues the flows are spread over, by a hash of the flow id. Each is its own BullMQ queue whose keys share one hash tag, so on a Redis Cluster each lives in one slot and the shards spread over the primaries; apps take jobs from every shard in turn. 1 (a single Redis): the queue's keys are as they always were. Every app of a deployment must have the same value.",
    ),
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/)
    .default('flowbox')
    .describe('Prefix of every Redis key and channel flowbox uses (BullMQ queue included).'),
  S3_ENDPOINT: envFields
    .url()
    .describe(
      'S3-compatible endpoint. Engines upload to URLs presigned for this host, so workers must reach it too.',
    ),
  S3_REGION: z.string().default('us-east-1').describe('Region used to sign S3 requests and presigned URLs.'),
  S3_BUCKET: z
    .string()
    .min(3)
    .default('flowbox')
    .describe('Bucket for flow bundles, piece archives and run logs; created at start when missing.'),
  S3_ACCESS_KEY_ID: z.string().min(1).describe('S3 access key id. Only the app holds S3 credentials.'),
  S3_SECRET_ACCESS_KEY: z.string().min(1).describe('S3 secret access key.'),
};
