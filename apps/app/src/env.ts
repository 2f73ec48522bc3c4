import { randomUUID } from 'node:crypto';
import { envFields, loadEnv } from '@flowbox/node-kit';
import { z } from 'zod';

/** Every variable the app reads. Listed in README.md and docs/configuration.md. */
export const AppEnvSchema = z.object({
  HOST: z.string().default('127.0.0.1'),
  PORT: envFields.port(3000),
  LOG_LEVEL: envFields.logLevel(),
  /** Names this instance's sync-response channel; unique per running app. */
  INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -')
    .default(() => randomUUID()),
  DATABASE_URL: z.string().regex(/^postgres(ql)?:\/\//, 'must be a postgres:// URL'),
  DATABASE_POOL_SIZE: envFields.positiveInt(10),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// URL'),
  /** Prefix of every Redis key and channel flowbox uses (BullMQ queue included). */
  REDIS_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_.:-]+$/)
    .default('flowbox'),
  S3_ENDPOINT: envFields.url(),
  S3_REGION: z.string().default('us-east-1'),
  S3_BUCKET: z.string().min(3).default('flowbox'),
  S3_ACCESS_KEY_ID: z.string().min(1),
  S3_SECRET_ACCESS_KEY: z.string().min(1),
  /** Signs engine and worker tokens (HS256). */
  TOKEN_SECRET: z.string().min(32, 'must be at least 32 characters'),
  WEBHOOK_TIMEOUT_SECONDS: envFields.positiveInt(30),
  WEBHOOK_BODY_LIMIT_BYTES: envFields.positiveInt(1_048_576),
  FLOW_TIMEOUT_SECONDS: envFields.positiveInt(60),
  CODE_STEP_TIMEOUT_MS: envFields.positiveInt(5_000),
  CODE_STEP_MEMORY_MB: z.coerce.number().int().min(8).max(4096).default(64),
  RUN_LOG_MAX_BYTES: envFields.positiveInt(10_485_760),
  /** How long a worker's poll waits for a job before it is answered `idle`. */
  WORKER_POLL_SECONDS: envFields.positiveInt(10),
});

export type AppConfig = z.infer<typeof AppEnvSchema>;

export function loadConfig(source: Record<string, string | undefined>): AppConfig {
  return loadEnv(AppEnvSchema, source);
}
