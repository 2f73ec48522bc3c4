import { randomBytes } from 'node:crypto';
import { mkdir, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { TokenService } from '@flowbox/app';
import {
  type LocalService,
  type LogLine,
  type ManagedProcess,
  ServiceStartError,
  spawnManaged,
  startPglite,
  startRedisServer,
  startS3rver,
} from '@flowbox/local-services';
import type { Logger } from '@flowbox/node-kit';
import type { RestartPolicy } from './restart-policy.ts';
import { type SupervisedProcess, supervise } from './supervised-process.ts';
import { superviseService } from './supervised-service.ts';

export interface StackOptions {
  dataDir: string;
  apps: number;
  workers: number;
  /** Port of the first app; the others take the next ones. 0 picks free ports. */
  port: number;
  logLevel: string;
  databaseUrl?: string | undefined;
  redisUrl?: string | undefined;
  s3?:
    | { endpoint: string; region: string; bucket: string; accessKeyId: string; secretAccessKey: string }
    | undefined;
  tokenSecret?: string | undefined;
  /** The management API key; random when unset. */
  apiKey?: string | undefined;
  /** The apps' CONNECTIONS_KEY; unset: a random one for this stack's life. */
  connectionsKey?: string | undefined;
  /** Which app each worker connects to (index into the apps); default round-robin. */
  workerTargets?: number[] | undefined;
  /** Extra environment for every app process (e.g. WEBHOOK_TIMEOUT_SECONDS in tests). */
  appEnv?: Record<string, string> | undefined;
  workerEnv?: Record<string, string> | undefined;
  /** Environment for one worker on top of `workerEnv` (e.g. its own CACHE_DIR in fault tests). */
  workerEnvAt?: ((index: number) => Record<string, string>) | undefined;
  onLine?: ((name: string, line: LogLine) => void) | undefined;
  /** The environment the child processes inherit (PATH and the like). */
  baseEnv: Record<string, string | undefined>;
  /**
   * Start an app or worker that dies again (`pnpm dev`); unset: a dead process stays dead, as
   * the fault tests need. An app comes back on the port it had.
   */
  supervise?: SupervisionOptions | undefined;
  /** The app and worker entry files; default this checkout's (`pnpm bench --baseline` runs another's). */
  entries?: StackEntries | undefined;
}

/** Another checkout's app and worker (`pnpm bench --baseline`). */
export interface StackEntries {
  app: string;
  worker: string;
  /** Its worker takes WORKER_TOKEN only (it predates WORKER_TOKEN_FILE). */
  workerTokenInEnv?: boolean;
}

export interface SupervisionOptions {
  policy: RestartPolicy;
  /** Says how each process died and when it is started again. */
  logger: Logger;
  /** A process crash-looped and was left dead. */
  onGiveUp: (name: string, reason: string) => void;
}

export interface RunningStack {
  appUrls: string[];
  /** For `authorization: Bearer <apiKey>` on /v1/flows and /v1/runs. */
  apiKey: string;
  /** The processes running now: with `supervise`, a restarted one takes its predecessor's place. */
  apps: ManagedProcess[];
  workers: ManagedProcess[];
  /** What was started in-process or from PATH because no URL was given. */
  embedded: string[];
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;

/**
 * Brings up a whole flowbox on this machine: the stores that were not given as URLs (PGlite,
 * redis-server, an S3 server), then the app and worker processes. Used by `pnpm dev`, the
 * end-to-end tests and the benchmark runner.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  // createRequire rather than import.meta.resolve: vitest's module runner lacks the latter.
  const require = createRequire(import.meta.url);
  const appEntry = options.entries?.app ?? require.resolve('@flowbox/app/main');
  const workerEntry = options.entries?.worker ?? require.resolve('@flowbox/worker/main');
  const services: LocalService[] = [];
  const processes: SupervisedProcess[] = [];
  const embedded: string[] = [];
  const unsupervise: Array<() => void> = [];
  const close = async () => {
    for (const stop of unsupervise) stop();
    // Workers first, while their apps can still take their last results; then apps; then stores.
    const workers = processes.filter((p) => p.name.startsWith('worker-'));
    await Promise.allSettled(workers.map((p) => p.stop()));
    await Promise.allSettled(processes.filter((p) => !workers.includes(p)).map((p) => p.stop()));
    await Promise.allSettled(services.reverse().map((s) => s.close()));
  };
  const run = (name: string, entry: string, env: () => Record<string, string>, slots: ManagedProcess[]) => {
    const index = slots.length;
    const start = () =>
      spawnManaged({
        name,
        command: process.execPath,
        args: [entry],
        env: env(),
        ipc: true,
        // A terminal's Ctrl-C reaches the launcher only, which stops workers (they drain) first.
        ownProcessGroup: true,
        onLine: (line) => options.onLine?.(name, line),
      });
    const supervised = supervisedOrNot(name, start, options.supervise, (next) => {
      slots[index] = next;
    });
    processes.push(supervised);
    slots.push(supervised.current());
    return supervised.current();
  };
  try {
    await mkdir(options.dataDir, { recursive: true });
    const databaseUrl =
      options.databaseUrl ??
      (
        await embed(services, embedded, 'PGlite', () =>
          startPglite({ dataDir: join(options.dataDir, 'pglite') }),
        )
      ).url;
    // PGlite serves every connection from one session, where a statement name can exist once.
    const preparedStatements = options.databaseUrl !== undefined;
    const redisUrl =
      options.redisUrl ??
      (
        await embed(services, embedded, 'redis-server', async () => {
          const dataDir = join(options.dataDir, 'redis');
          await mkdir(dataDir, { recursive: true });
          // AOF (fsync'd every second), so a restarted Redis keeps its queue.
          const redis = await startRedisServer({ port: 0, dataDir, appendOnly: true, ownProcessGroup: true });
          if (options.supervise !== undefined) {
            const supervision = options.supervise;
            unsupervise.push(
              superviseService({
                name: 'redis-server',
                server: redis,
                policy: supervision.policy,
                logger: supervision.logger,
                onGiveUp: (reason) => supervision.onGiveUp('redis-server', reason),
              }),
            );
          }
          return redis;
        })
      ).url;
    const s3 = options.s3 ?? (await embedS3(services, embedded, options.dataDir));
    const tokenSecret = options.tokenSecret ?? randomBytes(32).toString('base64url');
    const apiKey = options.apiKey ?? randomBytes(24).toString('base64url');
    const connectionsKey = options.connectionsKey ?? randomBytes(32).toString('base64');

    const baseEnv = cleanEnv(options.baseEnv);
    const appUrls: string[] = [];
    const apps: ManagedProcess[] = [];
    for (let index = 0; index < options.apps; index++) {
      const instanceId = `app-${index}-${randomBytes(3).toString('hex')}`;
      let port = options.port === 0 ? 0 : options.port + index;
      const app = run(
        `app-${index}`,
        appEntry,
        () => ({
          ...baseEnv,
          PORT: String(port),
          LOG_LEVEL: options.logLevel,
          INSTANCE_ID: instanceId,
          DATABASE_URL: databaseUrl,
          DATABASE_PREPARED_STATEMENTS: String(preparedStatements),
          REDIS_URL: redisUrl,
          S3_ENDPOINT: s3.endpoint,
          S3_REGION: s3.region,
          S3_BUCKET: s3.bucket,
          S3_ACCESS_KEY_ID: s3.accessKeyId,
          S3_SECRET_ACCESS_KEY: s3.secretAccessKey,
          TOKEN_SECRET: tokenSecret,
          API_KEY: apiKey,
          CONNECTIONS_KEY: connectionsKey,
          // pnpm dev, the tests and the benchmark all call the benchmark flow.
          SEED_BENCHMARK_FLOW: 'true',
          // A restart on this machine has no load balancer to wait for.
          SHUTDOWN_DRAIN_SECONDS: '0',
          ...options.appEnv,
        }),
        apps,
      );
      // Apps start one after the other so the first one migrates and seeds alone.
      const url = await readyUrl(app, options.onLine !== undefined);
      // A restarted app comes back where its workers and clients look for it.
      port = Number(new URL(url).port);
      appUrls.push(url);
    }

    const tokens = new TokenService(tokenSecret);
    const workers: ManagedProcess[] = [];
    for (let index = 0; index < options.workers; index++) {
      const target = options.workerTargets?.[index] ?? index % appUrls.length;
      const appUrl = appUrls[target];
      if (appUrl === undefined)
        throw new Error(`worker ${index} targets app ${target}, which does not exist`);
      // In a file the worker reads (WORKER_TOKEN_FILE): in no process's environment, and out of
      // its engines' reach.
      const workerToken = tokens.signWorkerToken(`worker-${index}`, 7 * 24 * 3600);
      const workerTokenFile = join(options.dataDir, `worker-${index}.token`);
      await writeFile(workerTokenFile, workerToken, { mode: 0o600 });
      const tokenEnv: Record<string, string> =
        options.entries?.workerTokenInEnv === true
          ? { WORKER_TOKEN: workerToken }
          : { WORKER_TOKEN_FILE: workerTokenFile };
      run(
        `worker-${index}`,
        workerEntry,
        () => ({
          ...baseEnv,
          LOG_LEVEL: options.logLevel,
          APP_URL: appUrl,
          WORKER_ID: `worker-${index}`,
          ...tokenEnv,
          // In the stack's data directory: two stacks on one host both have a `worker-0`, and the
          // worker's default (`<tmpdir>/flowbox-worker-<id>`) would be one cache for both.
          CACHE_DIR: workerCacheDir(options.dataDir, index),
          ...options.workerEnv,
          ...options.workerEnvAt?.(index),
        }),
        workers,
      );
    }
    return { appUrls, apiKey, apps, workers, embedded, close };
  } catch (error) {
    await close();
    throw error;
  }
}

/** Where worker `index` of a stack keeps its provisioning cache, which outlives the stack. */
function workerCacheDir(dataDir: string, index: number): string {
  return join(dataDir, 'worker-cache', `worker-${index}`);
}

function supervisedOrNot(
  name: string,
  start: () => ManagedProcess,
  supervision: SupervisionOptions | undefined,
  onRestart: (next: ManagedProcess) => void,
): SupervisedProcess {
  if (supervision === undefined) {
    const process = start();
    return {
      name,
      current: () => process,
      stop: async (graceMs) => void (await process.stop('SIGTERM', graceMs)),
    };
  }
  return supervise({
    name,
    start,
    policy: supervision.policy,
    logger: supervision.logger,
    onRestart,
    onGiveUp: (reason) => supervision.onGiveUp(name, reason),
  });
}

/** `shown`: the app's output already went to `onLine`, so an early exit need not repeat it. */
async function readyUrl(app: ManagedProcess, shown: boolean): Promise<string> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(
      () => reject(new Error(`${app.name} was not ready within ${READY_TIMEOUT_MS} ms`)),
      READY_TIMEOUT_MS,
    );
  });
  try {
    const message = await Promise.race([
      app.firstMessage.catch((error: unknown) => {
        throw shown && error instanceof ServiceStartError
          ? new ServiceStartError(error.message.split('\n')[0] ?? '', '')
          : error;
      }),
      timeout,
    ]);
    const url = (message as { type?: unknown; url?: unknown } | null)?.url;
    if (typeof url !== 'string') throw new Error(`${app.name} sent an unexpected first message`);
    return url;
  } finally {
    clearTimeout(timer);
  }
}

async function embed<T extends LocalService>(
  services: LocalService[],
  embedded: string[],
  name: string,
  start: () => Promise<T>,
): Promise<T> {
  const service = await start();
  services.push(service);
  embedded.push(name);
  return service;
}

async function embedS3(services: LocalService[], embedded: string[], dataDir: string) {
  // Local development credentials for the in-process server only; never used elsewhere.
  const credentials = { accessKeyId: 'flowbox-dev', secretAccessKey: 'flowbox-dev-secret' };
  const bucket = 'flowbox';
  const server = await embed(services, embedded, 'S3 (s3rver)', () =>
    startS3rver({ dataDir: join(dataDir, 's3'), bucket, ...credentials }),
  );
  return { endpoint: server.endpoint, region: 'us-east-1', bucket, ...credentials };
}

/** Children get the parent's environment minus flowbox's own variables, which are set explicitly. */
function cleanEnv(env: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(env)) {
    if (
      value !== undefined &&
      !/^(DATABASE_|REDIS_|S3_|TOKEN_SECRET|API_KEY|CONNECTIONS_KEY|WORKER_|APP_URL|PORT$|INSTANCE_ID)/.test(
        key,
      )
    ) {
      out[key] = value;
    }
  }
  return out;
}
