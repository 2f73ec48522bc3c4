import { type ChildProcess, fork } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { chmod, mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import {
  defaultToolsDir,
  findPostgresBinDir,
  findVersitygw,
  type PostgresServer,
  type S3Config,
  startPostgresServer,
  startRedisServer,
  startVersitygw,
} from '@flowbox/local-services';
import { observerClient, prepareObserver } from './postgres-stats.ts';

/**
 * The stores a local benchmark run needs, started once and shared by every scenario: real
 * PostgreSQL when its binaries are found (with pg_stat_statements preloaded), else PGlite;
 * redis-server; versitygw when found, else s3rver. PGlite and s3rver run in child processes so
 * that their CPU is not mixed with the load generator's.
 */
/** Where the stack's S3 server is and the bucket the app uses there. */
export type S3Settings = S3Config & { bucket: string };

export type Database =
  | { kind: 'postgres'; adminUrl: string; version: string; hasStatements: boolean }
  | { kind: 'pglite'; url: string };

export interface Services {
  database: Database;
  redisUrl: string;
  s3: S3Settings;
  /** What ran, for the report, e.g. `{ postgres: 'PostgreSQL 15.18, pg_stat_statements', ... }`. */
  description: { postgres: string; redis: string; s3: string };
  roots: { redis: number[]; postgres: number[]; s3: number[] };
  /** A fresh database for a scenario (PGlite has one database: its URL every time). */
  createDatabase(name: string): Promise<{ url: string; name: string }>;
  close(): Promise<void>;
}

type Env = Record<string, string | undefined>;

const S3_BUCKET = 'flowbox';
const SERVICE_CHILD = join(import.meta.dirname, 'service-child.ts');

export async function startServices(options: {
  root: string;
  pathEnv: string | undefined;
  toolsDir: string | undefined;
  /** The environment the server children inherit. */
  baseEnv: Record<string, string | undefined>;
}): Promise<Services> {
  // PostgreSQL runs as the `postgres` user when we are root: it must reach its data directory.
  await mkdir(options.root, { recursive: true });
  await chmod(options.root, 0o755);
  const closers: (() => Promise<void>)[] = [];
  const close = async () => {
    for (const closeOne of closers.reverse()) await closeOne().catch(() => {});
  };
  try {
    const redisDir = join(options.root, 'redis');
    await mkdir(redisDir, { recursive: true });
    const redis = await startRedisServer({ dataDir: redisDir });
    closers.push(() => redis.close());

    const s3 = await startS3(options, closers);
    const database = await startDatabase(options, closers);

    return {
      database: database.database,
      redisUrl: redis.url,
      s3: s3.settings,
      description: { postgres: database.description, redis: 'redis-server', s3: s3.description },
      roots: { redis: pids(redis.pid), postgres: database.pids, s3: s3.pids },
      createDatabase: database.createDatabase,
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}

function pids(...values: (number | undefined)[]): number[] {
  return values.filter((v): v is number => v !== undefined);
}

async function startS3(
  options: { root: string; pathEnv: string | undefined; toolsDir: string | undefined; baseEnv: Env },
  closers: (() => Promise<void>)[],
): Promise<{ settings: S3Settings; description: string; pids: number[] }> {
  // Benchmark-only credentials for a server that lives as long as this run.
  const credentials = { accessKeyId: 'flowbox-bench', secretAccessKey: randomBytes(20).toString('hex') };
  const dataDir = join(options.root, 's3');
  const versitygw = findVersitygw({
    pathEnv: options.pathEnv,
    toolsDir: options.toolsDir ?? defaultToolsDir(),
  });
  if (versitygw !== null) {
    const server = await startVersitygw({ dataDir, binary: versitygw, bucket: S3_BUCKET, ...credentials });
    closers.push(() => server.close());
    return {
      settings: { endpoint: server.endpoint, region: server.region, bucket: S3_BUCKET, ...credentials },
      description: 'versitygw',
      pids: pids(server.pid),
    };
  }
  await mkdir(dataDir, { recursive: true });
  const child = await forkServiceChild(['s3rver', dataDir], {
    ...options.baseEnv,
    BENCH_S3_BUCKET: S3_BUCKET,
    BENCH_S3_ACCESS_KEY_ID: credentials.accessKeyId,
    BENCH_S3_SECRET_ACCESS_KEY: credentials.secretAccessKey,
  });
  closers.push(child.close);
  return {
    settings: { endpoint: child.url, region: 'us-east-1', bucket: S3_BUCKET, ...credentials },
    description: 's3rver (versitygw not found)',
    pids: pids(child.pid),
  };
}

async function startDatabase(
  options: { root: string; pathEnv: string | undefined; baseEnv: Env },
  closers: (() => Promise<void>)[],
): Promise<{
  database: Database;
  description: string;
  pids: number[];
  createDatabase: Services['createDatabase'];
}> {
  const binDir = findPostgresBinDir({ pathEnv: options.pathEnv });
  if (binDir === null) {
    const child = await forkServiceChild(['pglite'], options.baseEnv);
    closers.push(child.close);
    return {
      database: { kind: 'pglite', url: child.url },
      description: 'PGlite (no PostgreSQL binaries found; statements not measured)',
      pids: pids(child.pid),
      createDatabase: async () => ({ url: child.url, name: 'postgres' }),
    };
  }
  const dataDir = join(options.root, 'postgres');
  let server = await startPostgresServer({ dataDir, binDir });
  // pg_stat_statements must be preloaded, which takes a restart of the fresh cluster.
  if (await enableStatements(server.url)) {
    await server.close();
    server = await startPostgresServer({ dataDir, binDir });
  }
  const running: PostgresServer = server;
  closers.push(() => running.close());
  const { hasStatements } = await prepareObserver(running.url);
  const version = await serverVersion(running.url);
  return {
    database: { kind: 'postgres', adminUrl: running.url, version, hasStatements },
    description: `PostgreSQL ${version}${hasStatements ? ', pg_stat_statements' : ' (pg_stat_statements unavailable: transactions only)'}`,
    pids: pids(running.pid),
    createDatabase: async (name) => ({ url: await running.createDatabase(name), name }),
  };
}

/** Sets shared_preload_libraries when the extension is installed; true when a restart is needed. */
async function enableStatements(adminUrl: string): Promise<boolean> {
  const client = observerClient(adminUrl);
  await client.connect();
  try {
    const available = await client.query(
      "SELECT 1 FROM pg_available_extensions WHERE name = 'pg_stat_statements'",
    );
    if (available.rowCount === 0) return false;
    await client.query("ALTER SYSTEM SET shared_preload_libraries = 'pg_stat_statements'");
    return true;
  } finally {
    await client.end();
  }
}

async function serverVersion(adminUrl: string): Promise<string> {
  const client = observerClient(adminUrl);
  await client.connect();
  try {
    const { rows } = await client.query<{ v: string }>("SELECT current_setting('server_version') AS v");
    return rows[0]?.v ?? 'unknown';
  } finally {
    await client.end();
  }
}

async function forkServiceChild(
  args: string[],
  env: Env,
): Promise<{ url: string; pid: number | undefined; close: () => Promise<void> }> {
  const child: ChildProcess = fork(SERVICE_CHILD, args, {
    env,
    stdio: ['ignore', 'ignore', 'inherit', 'ipc'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const close = async () => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill('SIGTERM');
    const timer = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(timer);
  };
  try {
    const url = await new Promise<string>((resolve, reject) => {
      child.once('message', (message: unknown) => {
        const m = message as { type?: unknown; url?: unknown; message?: unknown };
        if (m.type === 'ready' && typeof m.url === 'string') resolve(m.url);
        else reject(new Error(`${args[0]} failed to start: ${String(m.message ?? 'unexpected message')}`));
      });
      void exited.then(() => reject(new Error(`${args[0]} exited before it was ready`)));
    });
    return { url, pid: child.pid, close };
  } catch (error) {
    await close();
    throw error;
  }
}
