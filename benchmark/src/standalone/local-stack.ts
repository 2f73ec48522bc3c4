import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type pg from 'pg';
import { killProcessTrees } from '../force-stop.ts';
import {
  OBSERVER_ROLE,
  observerClient,
  openPostgresProbe,
  type PostgresProbe,
  withUserAndDatabase,
} from '../postgres-stats.ts';
import { openRedisProbe, type RedisProbe } from '../redis-stats.ts';
import { scenario } from '../scenarios.ts';
import { type Services, startServices } from '../services.ts';
import { type ScenarioStack, startScenarioStack } from '../stack-runner.ts';

/**
 * The stores and one stack of apps and warm workers, as `pnpm bench` starts them for a
 * scenario, for the scripts that measure something other than request load (schedules, paused
 * runs). Real PostgreSQL is required: the scripts read the runs' times from it.
 */
export interface LocalStack {
  stack: ScenarioStack;
  redis: RedisProbe;
  redisUrl: string;
  /** The stack's S3 server and bucket. */
  s3: Services['s3'];
  postgres: PostgresProbe;
  /** A client on the stack's database as its owner: the scripts' own reads and writes. */
  db: pg.Client;
  /** What ran, for the report. */
  services: { postgres: string; redis: string; s3: string };
  close(): Promise<void>;
}

export async function startLocalStack(options: {
  apps: number;
  workers: number;
  /** Added to every app's and worker's environment (settings the script needs). */
  env: Record<string, string>;
  name: string;
  signal: AbortSignal;
}): Promise<LocalStack> {
  const root = await mkdtemp(join(tmpdir(), 'flowbox-bench-'));
  const closers: (() => Promise<void>)[] = [async () => rm(root, { recursive: true, force: true })];
  const close = async () => {
    for (const closeOne of closers.reverse()) await closeOne().catch(() => {});
  };
  try {
    const baseEnv = { ...process.env, ...options.env };
    const services = await startServices({
      root,
      pathEnv: process.env.PATH,
      toolsDir: process.env.FLOWBOX_TOOLS_DIR,
      baseEnv,
    });
    closers.push(() => services.close());
    const database = services.database;
    if (database.kind !== 'postgres') {
      throw new Error(
        'this measurement reads run times from PostgreSQL: install it (initdb and postgres on PATH)',
      );
    }
    const redis = await openRedisProbe(services.redisUrl);
    closers.push(() => redis.close());
    // Warm workers (REUSE_SANDBOX=true), as the `warm` scenarios run them.
    const shape = scenario('warm', options.apps, Math.max(1, options.workers), 1);
    const stack = await startScenarioStack({
      services,
      scenario: { ...shape, workers: options.workers, name: options.name },
      index: 0,
      root,
      baseEnv,
      executionMode: 'SANDBOX_CODE_ONLY',
      signal: options.signal,
    });
    closers.push(() => stack.close());
    const pids = [
      ...(stack.roots.app ?? []),
      ...(stack.roots.worker ?? []),
      ...services.roots.postgres,
      ...services.roots.redis,
      ...services.roots.s3,
    ];
    // A second Ctrl-C kills what this script started.
    process.on('SIGINT', () => {
      if (options.signal.aborted) {
        killProcessTrees(pids);
        process.exit(130);
      }
    });
    const postgres = await openPostgresProbe({
      observerAdminUrl: withUserAndDatabase(database.adminUrl, OBSERVER_ROLE, 'postgres'),
      observerAppUrl: withUserAndDatabase(database.adminUrl, OBSERVER_ROLE, stack.database.name),
      appDatabase: stack.database.name,
      appRole: new URL(database.adminUrl).username || 'postgres',
      hasStatements: database.hasStatements,
    });
    closers.push(() => postgres.close());
    const db = observerClient(stack.database.url);
    await db.connect();
    closers.push(() => db.end());
    return {
      stack,
      redis,
      redisUrl: services.redisUrl,
      s3: services.s3,
      postgres,
      db,
      services: { ...services.description, redis: `Redis ${await redis.version()}` },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

/** An AbortSignal that the first Ctrl-C (or SIGTERM) aborts. */
export function interruptSignal(say: (line: string) => void): AbortSignal {
  const controller = new AbortController();
  const onSignal = (signal: NodeJS.Signals) => {
    if (controller.signal.aborted) return;
    say(`${signal}: stopping everything this script started (again to force)`);
    controller.abort(new Error(`stopped by ${signal}`));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  return controller.signal;
}

/** Resolves after `ms`, or rejects when `signal` aborts first. */
export function sleep(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal.aborted) {
      reject(signal.reason);
      return;
    }
    const timer = setTimeout(
      () => {
        signal.removeEventListener('abort', onAbort);
        resolve();
      },
      Math.max(0, ms),
    );
    const onAbort = () => {
      clearTimeout(timer);
      reject(signal.reason);
    };
    signal.addEventListener('abort', onAbort, { once: true });
  });
}
