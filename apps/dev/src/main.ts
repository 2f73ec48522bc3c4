import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { BENCHMARK_FLOW_ID, INSPECTOR_PATH } from '@flowbox/app';
import { createLogger, onShutdownSignal } from '@flowbox/node-kit';
import { devBanner } from './dev-banner.ts';
import { loadConfig } from './env.ts';
import { watchParent } from './parent-watch.ts';
import { DEFAULT_RESTART_POLICY } from './restart-policy.ts';
import { startStack } from './stack.ts';

/** Workers drain (SHUTDOWN_GRACE_SECONDS, 10 s by default), then apps and stores stop. */
const SHUTDOWN_GRACE_MS = 20_000;

async function main(): Promise<void> {
  const config = loadConfig(process.env, process.cwd());
  const logger = createLogger({ name: 'dev', level: config.LOG_LEVEL });
  // Stopping pnpm (its PID, a closed terminal, SIGKILL) must not leave this launcher and its
  // stack running under init: the parent's death is a hang-up. Until the stack is up, SIGHUP
  // ends the launcher at once, and its processes follow (IPC channel, parent-death signal).
  watchParent(() => {
    logger.warn('the process that started flowbox dev is gone; stopping');
    process.kill(process.pid, 'SIGHUP');
  });
  // Set once the stack is up; a crash loop during start-up fails startStack itself.
  let closeStack = async () => {};
  const stack = await startStack({
    dataDir: config.dataDir,
    apps: config.APPS,
    workers: config.WORKERS,
    port: config.PORT,
    logLevel: config.LOG_LEVEL,
    databaseUrl: config.DATABASE_URL,
    redisUrl: config.REDIS_URL,
    s3:
      config.S3_ENDPOINT === undefined
        ? undefined
        : {
            endpoint: config.S3_ENDPOINT,
            region: config.S3_REGION,
            bucket: config.S3_BUCKET,
            accessKeyId: config.S3_ACCESS_KEY_ID ?? '',
            secretAccessKey: config.S3_SECRET_ACCESS_KEY ?? '',
          },
    tokenSecret: config.TOKEN_SECRET,
    apiKey: config.API_KEY ?? (await localApiKey(config.dataDir)),
    connectionsKey: config.CONNECTIONS_KEY ?? (await localConnectionsKey(config.dataDir)),
    baseEnv: process.env,
    onLine: (_name, line) => process.stdout.write(`${line.raw}\n`),
    supervise: {
      policy: DEFAULT_RESTART_POLICY,
      logger,
      // A process that crash-loops leaves a stack that cannot work: stop it all, loudly.
      onGiveUp: (name, reason) => {
        logger.fatal({ process: name, reason }, `${name} keeps dying (${reason}); stopping flowbox dev`);
        void closeStack().finally(() => process.exit(1));
      },
    },
  });
  closeStack = () => stack.close();
  // `ignore`: under pnpm a Ctrl-C arrives twice (from the terminal, and passed on by pnpm).
  onShutdownSignal(logger, () => stack.close(), SHUTDOWN_GRACE_MS, { repeat: 'ignore' });
  process.stdout.write(
    devBanner({
      url: stack.appUrls[0] ?? '',
      apiKey: stack.apiKey,
      apps: stack.appUrls.length,
      workers: stack.workers.length,
      embedded: stack.embedded,
      dataDir: config.dataDir,
      benchmarkFlowId: BENCHMARK_FLOW_ID,
      inspectorPath: INSPECTOR_PATH,
    }),
  );
}

/** A development API key kept beside the embedded data, so printed commands keep working. */
async function localApiKey(dataDir: string): Promise<string> {
  const file = join(dataDir, 'api-key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const key = randomBytes(24).toString('base64url');
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${key}\n`, { mode: 0o600 });
    return key;
  }
}

/**
 * A development CONNECTIONS_KEY kept beside the embedded data: connections created in one
 * `pnpm dev` still open in the next (the app refuses to start with connections it cannot open).
 */
async function localConnectionsKey(dataDir: string): Promise<string> {
  const file = join(dataDir, 'connections-key');
  try {
    return (await readFile(file, 'utf8')).trim();
  } catch {
    const key = randomBytes(32).toString('base64');
    await mkdir(dataDir, { recursive: true });
    await writeFile(file, `${key}\n`, { mode: 0o600 });
    return key;
  }
}

main().catch((error: unknown) => {
  const message =
    error instanceof Error && ['ConfigError', 'MissingBinaryError', 'ServiceStartError'].includes(error.name)
      ? error.message
      : error;
  console.error('flowbox dev failed to start:', message);
  process.exit(1);
});
