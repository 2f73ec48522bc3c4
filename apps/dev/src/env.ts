import { resolve } from 'node:path';
import { envFields, loadEnv } from '@flowbox/node-kit';
import { z } from 'zod';

/**
 * `pnpm dev`: every store is optional. An unset DATABASE_URL means embedded PGlite, an unset
 * REDIS_URL a redis-server from PATH, an unset S3_ENDPOINT an in-process S3 server.
 */
export const DevEnvSchema = z.object({
  PORT: envFields
    .port(3000)
    .describe('Port of the first app; further apps take the next ports. 0 picks free ports.'),
  LOG_LEVEL: envFields.logLevel().describe('pino log level of the launcher and every process it starts.'),
  DATA_DIR: z
    .string()
    .default('.data')
    .describe('Where embedded stores keep their data, relative to the working directory.'),
  APPS: z.coerce.number().int().min(1).max(8).default(1).describe('Number of app processes.'),
  WORKERS: z.coerce
    .number()
    .int()
    .min(1)
    .max(32)
    .default(1)
    .describe('Number of worker processes, spread round-robin over the apps.'),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional()
    .describe(
      'A Postgres to use; unset: embedded PGlite in DATA_DIR, served over the Postgres wire protocol.',
    ),
  REDIS_URL: z
    .string()
    .regex(/^rediss?(\+cluster)?:\/\//, 'must be a redis:// or redis+cluster:// URL')
    .optional()
    .describe(
      'A Redis (or a Redis Cluster, `redis+cluster://host:port,host:port`) to use; unset: a `redis-server` from PATH, with its data in DATA_DIR.',
    ),
  S3_ENDPOINT: envFields
    .url()
    .optional()
    .describe(
      'An S3-compatible endpoint to use (then the two S3 keys are required); unset: an in-process S3 server.',
    ),
  S3_REGION: z.string().default('us-east-1').describe('Region of S3_ENDPOINT (ignored without it).'),
  S3_BUCKET: z.string().min(3).default('flowbox').describe('Bucket on S3_ENDPOINT (ignored without it).'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional().describe('Access key id for S3_ENDPOINT.'),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional().describe('Secret access key for S3_ENDPOINT.'),
  TOKEN_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe("The apps' TOKEN_SECRET; unset: a random one at each start."),
  API_KEY: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe('The management API key; unset: one is generated once and kept in DATA_DIR/api-key.'),
  CONNECTIONS_KEY: z
    .string()
    .regex(/^[A-Za-z0-9+/]{43}=$/, 'must be 32 bytes in base64 (44 characters)')
    .optional()
    .describe(
      "The apps' CONNECTIONS_KEY; unset: one is generated once and kept in DATA_DIR/connections-key.",
    ),
});

export type DevConfig = z.infer<typeof DevEnvSchema> & { dataDir: string };

export function loadConfig(source: Record<string, string | undefined>, cwd: string): DevConfig {
  const config = loadEnv(
    DevEnvSchema.refine(
      (c) => c.S3_ENDPOINT === undefined || (c.S3_ACCESS_KEY_ID && c.S3_SECRET_ACCESS_KEY),
      {
        message: 'S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY are required with S3_ENDPOINT',
        path: ['S3_ENDPOINT'],
      },
    ),
    source,
  );
  return { ...config, dataDir: resolve(cwd, config.DATA_DIR) };
}
