import { resolve } from 'node:path';
import { envFields, loadEnv } from '@flowbox/node-kit';
import { z } from 'zod';

/**
 * `pnpm dev`: every store is optional. An unset DATABASE_URL means embedded PGlite, an unset
 * REDIS_URL a redis-server from PATH, an unset S3_ENDPOINT an in-process S3 server.
 */
export const DevEnvSchema = z.object({
  PORT: envFields.port(3000),
  LOG_LEVEL: envFields.logLevel(),
  DATA_DIR: z.string().default('.data'),
  APPS: z.coerce.number().int().min(1).max(8).default(1),
  WORKERS: z.coerce.number().int().min(1).max(32).default(1),
  DATABASE_URL: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL')
    .optional(),
  REDIS_URL: z
    .string()
    .regex(/^rediss?:\/\//, 'must be a redis:// URL')
    .optional(),
  S3_ENDPOINT: envFields.url().optional(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().min(3).default('flowbox'),
  S3_ACCESS_KEY_ID: z.string().min(1).optional(),
  S3_SECRET_ACCESS_KEY: z.string().min(1).optional(),
  TOKEN_SECRET: z.string().min(32, 'must be at least 32 characters').optional(),
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
