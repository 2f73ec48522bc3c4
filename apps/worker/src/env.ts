import { createRequire } from 'node:module';
import { hostname } from 'node:os';
import path from 'node:path';
import { envFields, loadEnv } from '@flowbox/node-kit';
import { z } from 'zod';

export const WorkerEnvSchema = z.object({
  /** Base URL of the app: socket.io for jobs, and the engine's callbacks. */
  APP_URL: envFields.url(),
  WORKER_TOKEN: z.string().min(1, 'must not be empty'),
  WORKER_ID: z.string().min(1).optional(),
  LOG_LEVEL: envFields.logLevel(),
  /** The engine's entry file; defaults to the @flowbox/engine package's main. */
  ENGINE_ENTRY: z.string().min(1).optional(),
});

export interface WorkerConfig {
  appUrl: string;
  workerToken: string;
  workerId: string;
  logLevel: string;
  engineEntry: string;
}

export function loadConfig(source: Record<string, string | undefined>): WorkerConfig {
  const env = loadEnv(WorkerEnvSchema, source);
  return {
    appUrl: env.APP_URL,
    workerToken: env.WORKER_TOKEN,
    workerId: env.WORKER_ID ?? `${hostname()}-${process.pid}`,
    logLevel: env.LOG_LEVEL,
    engineEntry: env.ENGINE_ENTRY === undefined ? defaultEngineEntry() : path.resolve(env.ENGINE_ENTRY),
  };
}

/**
 * Resolved like `import.meta.resolve` would, through the package's `exports`; createRequire
 * because vitest's module runner does not provide `import.meta.resolve`.
 */
export function defaultEngineEntry(): string {
  return createRequire(import.meta.url).resolve('@flowbox/engine/main');
}
