import { randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { type LogLine, type RunningStack, type StackEntries, startStack } from '@flowbox/dev';
import { describeExit, type ManagedProcess } from '@flowbox/local-services';
import type { ExecutionMode } from '@flowbox/protocol';
import { createLogTally, type LogTallySnapshot } from './log-tally.ts';
import type { KindRoots } from './proc-stats.ts';
import { connectedWorkers } from './runs-api.ts';
import { type Scenario, workerEnvFor } from './scenarios.ts';
import type { Services } from './services.ts';
import { startFleetProcess } from './sim/fleet-process.ts';

/** The app and worker processes of one scenario, on the shared stores, with a fresh database. */
export interface ScenarioStack {
  appUrls: string[];
  apiKey: string;
  database: { url: string; name: string };
  roots: KindRoots;
  /** Warning and error lines printed so far (pino levels 40 and 50 and up), by message. */
  logCounts(): LogTallySnapshot;
  /** The last lines the processes printed, for error messages. */
  recentLines(): string;
  close(): Promise<void>;
}

const READY_TIMEOUT_MS = 60_000;
const RECENT_LINES = 40;
// Logging costs CPU on the hot path; only problems are printed while measuring.
const LOG_LEVEL = 'warn';

export async function startScenarioStack(options: {
  services: Services;
  scenario: Scenario;
  index: number;
  root: string;
  baseEnv: Record<string, string | undefined>;
  executionMode: ExecutionMode;
  /** Profile the app, worker and engine processes into `<cpuProfDir>/<kind>` (--cpu-prof). */
  cpuProfDir?: string | undefined;
  /** Another checkout's app and worker (`--baseline`); default this one's. */
  entries?: StackEntries | undefined;
  /** `--hops`: the OTLP/HTTP endpoint the apps and workers export their spans to. */
  tracingEndpoint?: string | undefined;
  signal: AbortSignal;
}): Promise<ScenarioStack> {
  const { services, scenario } = options;
  const dataDir = join(options.root, `stack-${options.index}`);
  // Each scenario's workers cache in its own data directory (startStack: DATA_DIR/worker-cache),
  // so provisioning caches start empty; their temporary files go to a directory of its own too.
  const tmpDir = join(dataDir, 'tmp');
  await mkdir(tmpDir, { recursive: true });
  const database = await services.createDatabase(`bench_${options.index}_${scenario.mode.replace('-', '_')}`);
  const profiling = profilingEnv(options.cpuProfDir);
  const tracing: Record<string, string> =
    options.tracingEndpoint === undefined ? {} : { OTEL_EXPORTER_OTLP_ENDPOINT: options.tracingEndpoint };
  const tally = createLogTally();
  const simulated = scenario.mode === 'sim';
  const durable = scenario.mode === 'pause' || scenario.mode === 'delay' || scenario.mode === 'nodelay';
  // A simulated fleet's tokens are minted here, so the runner knows the stack's secret.
  const tokenSecret = randomBytes(32).toString('base64url');
  const recent: string[] = [];
  const onLine = (name: string, line: LogLine) => {
    tally.record(name, line.json);
    recent.push(`${name}: ${line.raw}`);
    if (recent.length > RECENT_LINES) recent.shift();
  };
  const stack: RunningStack = await startStack({
    dataDir,
    apps: scenario.apps,
    // Simulated workers are one process of the runner's, started below.
    workers: simulated ? 0 : scenario.workers,
    tokenSecret,
    port: 0,
    logLevel: LOG_LEVEL,
    databaseUrl: database.url,
    redisUrl: services.redisUrl,
    s3: services.s3,
    // Load goes only to this machine's loopback, whatever HOST the caller's environment holds.
    appEnv: {
      HOST: '127.0.0.1',
      // PGlite serves every connection from one session, where a statement name can exist once.
      ...(services.database.kind === 'pglite' ? { DATABASE_PREPARED_STATEMENTS: 'false' } : {}),
      ...profiling.app,
      ...tracing,
      // The durable-run flows' delays (1.1 s, 5 s) must pause, not sleep in place.
      ...(durable ? { PAUSE_MIN_MS: '1000' } : {}),
    },
    workerEnv: {
      ...workerEnvFor(scenario.mode),
      EXECUTION_MODE: options.executionMode,
      TMPDIR: tmpDir,
      ...profiling.worker,
      ...tracing,
    },
    baseEnv: options.baseEnv,
    entries: options.entries,
    onLine,
  });
  const recentLines = () => recent.join('\n');
  let fleet: ManagedProcess | null = null;
  try {
    const remote = stack.appUrls.find((url) => !isLoopback(url));
    if (remote !== undefined)
      throw new Error(`app listens on ${remote}, not on loopback: refusing to load it`);
    if (simulated) {
      fleet = await startFleetProcess({
        dir: dataDir,
        appUrls: stack.appUrls,
        workers: scenario.workers,
        serviceMs: scenario.serviceMs ?? 0,
        tokenSecret,
        baseEnv: options.baseEnv,
        onLine: (line) => onLine('sim', line),
      });
    }
    await waitForWorkers(stack, scenario.workers, options.signal, recentLines, fleet);
  } catch (error) {
    await fleet?.stop('SIGTERM', 10_000);
    await stack.close();
    throw error;
  }
  return {
    appUrls: stack.appUrls,
    apiKey: stack.apiKey,
    database,
    roots: {
      app: stack.apps.map((p) => p.pid),
      worker: stack.workers.map((p) => p.pid),
      ...(fleet === null ? {} : { sim: [fleet.pid] }),
      ...services.roots,
      loadgen: [process.pid],
    },
    logCounts: () => tally.snapshot(),
    recentLines,
    close: async () => {
      // Workers first, as startStack does, while their apps can still take their last results.
      await fleet?.stop('SIGTERM', 10_000);
      await stack.close();
    },
  };
}

/**
 * V8 writes a process's profile when it exits by itself: apps and workers do on SIGTERM, and the
 * worker ends its engines gently when ENGINE_CPU_PROF_DIR is set.
 */
function profilingEnv(dir: string | undefined): {
  app: Record<string, string>;
  worker: Record<string, string>;
} {
  if (dir === undefined) return { app: {}, worker: {} };
  const nodeOptions = (kind: string) => `--cpu-prof --cpu-prof-dir=${join(dir, kind)}`;
  return {
    app: { NODE_OPTIONS: nodeOptions('app') },
    worker: { NODE_OPTIONS: nodeOptions('worker'), ENGINE_CPU_PROF_DIR: join(dir, 'engine') },
  };
}

/** Waits until every worker has connected to an app (asking each app's /health/ready). */
async function waitForWorkers(
  stack: RunningStack,
  workers: number,
  signal: AbortSignal,
  recentLines: () => string,
  fleet: ManagedProcess | null,
): Promise<void> {
  const deadline = Date.now() + READY_TIMEOUT_MS;
  let exited: string | null = null;
  for (const p of [...stack.apps, ...stack.workers, ...(fleet === null ? [] : [fleet])]) {
    void p.exited.then((exit) => {
      exited ??= `${p.name} exited (${describeExit(exit)})`;
    });
  }
  for (;;) {
    signal.throwIfAborted();
    if (exited !== null) throw new Error(`${exited} while the stack was starting:\n${recentLines()}`);
    const counts = await Promise.all(stack.appUrls.map((url) => connectedWorkers(url, signal)));
    const connected = counts.reduce<number>((total, n) => total + (n ?? 0), 0);
    if (connected >= workers) return;
    if (Date.now() > deadline) {
      throw new Error(
        `only ${connected} of ${workers} workers connected within ${READY_TIMEOUT_MS} ms:\n${recentLines()}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

export function isLoopback(url: string): boolean {
  const host = new URL(url).hostname;
  return host === 'localhost' || host === '[::1]' || /^127\.\d+\.\d+\.\d+$/.test(host);
}
