import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import { DEFAULT_EGRESS_POLICY_TEXT, parseEgressPolicy } from '@flowbox/egress';
import { ConfigError, envFields, loadEnv } from '@flowbox/node-kit';
import {
  DEFAULT_FETCH_LIMITS,
  type EgressPolicy,
  type ExecutionMode,
  ExecutionModeSchema,
  type FetchLimits,
  type RunIsolation,
  RunIsolationSchema,
} from '@flowbox/protocol';
import { DEFAULT_SERVICE_NAMES } from '@flowbox/tracing';
import { z } from 'zod';

/** One largest response (5 MiB), which the relay's answer may carry escaped to twice that. */
const MIN_FETCH_BUFFERED_MB = 11;
const MIB = 1024 * 1024;

/** An egress policy as written (see parseEgressPolicy), checked where it is read. */
const egressPolicyText = () =>
  z.string().superRefine((text, ctx) => {
    try {
      parseEgressPolicy(text);
    } catch (error) {
      ctx.addIssue({ code: 'custom', message: (error as Error).message });
    }
  });

/**
 * The worker's environment. Each variable's meaning and default is its `.describe()`, from
 * which docs/configuration.md is generated.
 */
export const WorkerEnvSchema = z.object({
  APP_URL: envFields.url().describe("Base URL of the app: socket.io for jobs, and the engine's callbacks."),
  WORKER_TOKEN: z
    .string()
    .min(1, 'must not be empty')
    .optional()
    .describe(
      "The worker's credential towards the app (mint one with mint-worker-token); never passed to an engine. Set this or `WORKER_TOKEN_FILE`.",
    ),
  WORKER_TOKEN_FILE: z
    .string()
    .min(1, 'must not be empty')
    .optional()
    .describe(
      "A file holding the worker's token (surrounding whitespace ignored), in place of `WORKER_TOKEN`: the token is then in no process's environment. Engines cannot read the file.",
    ),
  WORKER_ID: z
    .string()
    .regex(/^[A-Za-z0-9._-]{1,128}$/, 'must be 1-128 letters, digits, dots, dashes or underscores')
    .optional()
    .describe('Names the worker in polls, results and logs; unset: `<hostname>-<pid>`.'),
  LOG_LEVEL: envFields.logLevel().describe('pino log level.'),
  CACHE_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The provisioning cache (engine, flow bundles, pieces), kept across restarts; unset: `<os tmpdir>/flowbox-worker-<WORKER_ID>`, which the worker removes when it shuts down cleanly. `pnpm dev` sets it to `DATA_DIR/worker-cache/worker-<n>`.',
    ),
  ENGINE_BUNDLE: z
    .string()
    .min(1)
    .optional()
    .describe(
      'The built engine file, installed into the cache once and forked from there; unset: `@flowbox/engine/bundle` (apps/engine/dist/engine.mjs, made by `pnpm build`).',
    ),
  RUN_ISOLATION: RunIsolationSchema.optional().describe(
    "How runs are kept apart. `isolate` (the default): one engine process serves job after job, and each run executes entirely in a fresh V8 context made from a snapshot of its pieces, in an isolate that serves `ISOLATE_MAX_RUNS` runs (nothing a run leaves behind reaches the next; `CODE_STEP_MEMORY_MB` then bounds the isolate's heap and `CODE_STEP_TIMEOUT_MS` the whole run's CPU time). A job whose flow uses a piece that imports a Node built-in (the app says so in the job) runs instead in a fresh engine process that never ran another job, under the worker's `EXECUTION_MODE`, unless the app's `TRUSTED_PIECES` lists every such piece: then in the reused engine's own realm. A job the isolate refuses before any step ran (`PIECE_NOT_ISOLATABLE`, e.g. a module not in the piece build's form) runs once more in such a fresh process. `shared` (warm): one engine process serves job after job, its runs in the engine's own realm. `process` (cold): a fresh engine process for every job. Unset: from `REUSE_SANDBOX`, else `isolate`.",
  ),
  REUSE_SANDBOX: z
    .enum(['true', 'false', '1', '0'], { message: 'must be true or false' })
    .optional()
    .transform((v) => (v === undefined ? undefined : v === 'true' || v === '1'))
    .describe(
      'The former switch, still read when `RUN_ISOLATION` is unset: `true` is `shared`, `false` is `process`; setting both so they disagree is refused.',
    ),
  WORKER_POLL_AHEAD: envFields
    .boolean(true)
    .describe(
      "Once the engine sent the flow's last response, the worker polls for its next job while the run's result is still on its way; `false`: it polls only after the result is acknowledged (one round trip more on each job's path). The run log's upload holds neither: the engine goes on with it after the result.",
    ),
  ENGINE_MAX_JOBS: envFields
    .positiveInt(10_000)
    .describe(
      '`shared` and `isolate`: an engine is recycled after this many jobs (a backstop: its memory stayed flat over 10,000 runs in the soak, and `ENGINE_MAX_RSS_MB` catches growth; each recycle costs a boot and a fresh JIT).',
    ),
  ENGINE_MAX_RSS_MB: envFields
    .positiveInt(512)
    .describe(
      '`shared` and `isolate`: an engine is recycled after a job that leaves its resident memory above this.',
    ),
  ISOLATE_MAX_RUNS: envFields
    .positiveInt(100)
    .describe(
      "`isolate`: each run gets a fresh V8 context made from its pieces' snapshot, in an isolate of the engine that serves this many runs one after another; then (or sooner: after a run that broke a limit, when the isolate's heap holds more than half of `CODE_STEP_MEMORY_MB` after a run, when the pieces or the limit change) the next run gets a fresh isolate. 1: a fresh isolate for every run (about 5 ms more of engine CPU per run, docs/performance.md). The runs an isolate serves share its heap limit and garbage collector (docs/guarantees.md).",
    ),
  ENGINE_MEMORY_LIMIT_MB: envFields
    .positiveInt(1024)
    .describe(
      "Every execution mode: while an engine runs a job, the worker measures its resident memory (a sandboxed engine's processes included) every 100 ms; past this the engine is killed and the run fails `ENGINE_MEMORY_LIMIT` (not retried). The bound on what one run can take of the worker's machine, whatever it allocates (isolated-vm's `CODE_STEP_MEMORY_MB` covers only a code step's isolate; UNSANDBOXED code steps have no limit of their own). Keep it above `ENGINE_MAX_RSS_MB` and an engine's idle size (about 100 MB).",
    ),
  PREWARM: envFields
    .boolean(true)
    .describe(
      '`process`: boot the next fresh engine ahead of its job, while the current job runs. `isolate`: the same for the fresh engines of jobs whose flow needs Node, once the first such job came (ignored in `shared`).',
    ),
  ENGINE_SNAPSHOT: envFields
    .boolean(true)
    .describe(
      'Start engines from a V8 startup snapshot of the engine runtime, which the worker builds into its cache on first use (once per engine build and Node version): a fresh engine then deserializes the runtime instead of loading it. `false`, or a snapshot that cannot be built, starts them from `engine.mjs`.',
    ),
  ENGINE_PID_NAMESPACE: envFields
    .boolean(true)
    .describe(
      "`SANDBOX_CODE_ONLY` and `UNSANDBOXED`: every engine starts under bubblewrap in a user and PID namespace of its own, with its own /proc, so piece code cannot read the worker's token (or any host process's environment or memory) from /proc; the worker refuses to start when bubblewrap cannot make one. `false` forks engines beside the worker, where piece code can read its token (`SANDBOXED` engines always have their own namespaces).",
    ),
  EXECUTION_MODE: ExecutionModeSchema.default('SANDBOX_CODE_ONLY').describe(
    '`SANDBOX_CODE_ONLY`: code steps run in isolated-vm inside the engine; `SANDBOXED`: the same, with the whole engine in a bubblewrap sandbox (no network, read-only files, no process of its own; needs `bwrap` and user namespaces, and the worker refuses to start without them); `UNSANDBOXED`: code steps in the engine itself (for comparison only).',
  ),
  EGRESS: egressPolicyText()
    .optional()
    .describe(
      "Which hosts a run may call: code steps' `fetch` and pieces' requests (`ctx.fetch`, the `http` piece) alike, comma-separated: `public` (any host whose every address is public), a host name or address (`api.example.com`, `10.0.0.5`), either with `:PORT` to allow one port only, or `none` alone. Loopback, private, link-local and cloud metadata addresses are refused unless named, checked on the resolved addresses and on every redirect. A refused request fails with `EGRESS_DENIED`, whose message names the value that would allow it (`EGRESS=public,127.0.0.1:3799 would allow it`). Unset: `CODE_STEP_EGRESS`, else `public`.",
    ),
  CODE_STEP_EGRESS: egressPolicyText()
    .optional()
    .describe(
      'The former name of `EGRESS`, still read when `EGRESS` is unset; setting both to different policies is refused.',
    ),
  CODE_STEP_FETCH_MAX_IN_FLIGHT: envFields
    .positiveInt(DEFAULT_FETCH_LIMITS.maxInFlight)
    .describe(
      "How many of one run's HTTP requests (code steps' `fetch` and pieces' `ctx.fetch` together) are in flight at once; more wait, in order, for a slot. Held by the engine, and by the worker's relay in SANDBOXED mode.",
    ),
  CODE_STEP_FETCH_MAX_BUFFERED_MB: envFields
    .positiveInt(DEFAULT_FETCH_LIMITS.maxBufferedBytes / MIB)
    .refine(
      (mb) => mb >= MIN_FETCH_BUFFERED_MB,
      `must be at least ${MIN_FETCH_BUFFERED_MB}, room for one largest response`,
    )
    .describe(
      "MiB one run's HTTP requests (code steps' `fetch` and pieces' `ctx.fetch` together) may hold at once, in the engine and (SANDBOXED) in the worker's relay: request bodies (waiting ones included) and responses as they arrive. A request or response that would go past it fails at once with `CODE_STEP_FETCH_LIMIT`, and its connection is closed. At least 11 (one 5 MiB response, escaped as JSON on its way through the relay).",
    ),
  METRICS_PORT: z.coerce
    .number()
    .int()
    .min(0)
    .max(65_535)
    .optional()
    .describe(
      'Serve Prometheus metrics on this port at `/metrics` (jobs, engine boots, provisioning, cache, engine RSS; no secret); unset: no metrics server. 0 picks a free port.',
    ),
  METRICS_HOST: z
    .string()
    .min(1)
    .default('0.0.0.0')
    .describe('Address the metrics server listens on, when METRICS_PORT is set.'),
  SHUTDOWN_GRACE_SECONDS: envFields
    .positiveInt(10)
    .describe(
      "On SIGTERM the worker stops polling and lets its running flow finish and report. A flow that would outlast this is handed back 1 s before it ends: the worker exits 0 without its result and the app re-queues the job (`RUN_MAX_ATTEMPTS`) or fails it `WORKER_LOST`. Keep it below the orchestrator's grace period.",
    ),
  ENGINE_CPU_PROF_DIR: z
    .string()
    .min(1)
    .optional()
    .describe(
      'Profiling only (`pnpm bench --cpu-prof`): every engine runs with `--cpu-prof` and writes its V8 CPU profile into this directory as `engine.<WORKER_ID>.<tag>.<n>.cpuprofile` (its own name: engines in their PID namespace all have the same pid); engines are then ended by closing their IPC channel instead of SIGKILL, so the profile is written. Not applied to SANDBOXED engines. Unset: off.',
    ),
  OTEL_EXPORTER_OTLP_ENDPOINT: envFields
    .url()
    .optional()
    .describe(
      "Base URL of an OpenTelemetry collector (OTLP/HTTP, e.g. `http://otel-collector:4318`): the worker exports its spans of traced runs, and its engines' (service `flowbox-engine`, which never reach the network themselves), to `<url>/v1/traces` as JSON. Unset: no tracing, and no OpenTelemetry SDK loaded.",
    ),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .default(DEFAULT_SERVICE_NAMES.worker)
    .describe("The worker's `service.name` in its spans, when tracing is on."),
});

/**
 * How engines are supplied to jobs (see warm-engine-supply.ts and cold-engine-supply.ts).
 * `isolate`: the reused engine runs each job in a fresh context (RUN_ISOLATION=isolate), and
 * jobs whose flow needs Node get fresh engines, booted ahead when `prewarm` (run-isolation.ts).
 */
export type SandboxConfig =
  | { reuse: true; maxJobs: number; maxRssBytes: number; isolate?: { prewarm: boolean } }
  | { reuse: false; prewarm: boolean };

export interface WorkerConfig {
  appUrl: string;
  workerToken: string;
  /** WORKER_TOKEN_FILE, or null: engines see it as empty. */
  workerTokenFile: string | null;
  /** ENGINE_PID_NAMESPACE: engines that are not SANDBOXED start in a PID namespace of their own. */
  enginePidNamespace: boolean;
  workerId: string;
  logLevel: string;
  cacheDir: string;
  /** CACHE_DIR was unset: the cache is the worker's own temporary directory, removed at a clean shutdown. */
  cacheDirTemporary: boolean;
  engineBundle: string;
  /** Start engines from a startup snapshot (ENGINE_SNAPSHOT). */
  engineSnapshot: boolean;
  sandbox: SandboxConfig;
  /** ENGINE_MEMORY_LIMIT_MB in bytes: an engine past it during a job is killed. */
  engineMemoryLimitBytes: number;
  executionMode: ExecutionMode;
  /** ISOLATE_MAX_RUNS: with RUN_ISOLATION=isolate, the runs one isolate of an engine serves. */
  isolateMaxRuns: number;
  /** Which hosts code steps and pieces may call (parsed EGRESS, or its alias CODE_STEP_EGRESS). */
  egress: EgressPolicy;
  /** How much one run's `fetch` calls may hold (CODE_STEP_FETCH_*). */
  fetchLimits: FetchLimits;
  /** Where to serve /metrics, or null for no metrics server. */
  metrics: { host: string; port: number } | null;
  /** SIGTERM → forced exit, in milliseconds. */
  shutdownGraceMs: number;
  /** ENGINE_CPU_PROF_DIR: where engines write CPU profiles, or null (the default: no profiling). */
  engineCpuProfDir: string | null;
  /** Where to export spans (OTEL_EXPORTER_OTLP_ENDPOINT), or null for no tracing. */
  tracing: { endpoint: string; serviceName: string } | null;
  /** WORKER_POLL_AHEAD. */
  pollAhead: boolean;
}

export function loadConfig(source: Record<string, string | undefined>): WorkerConfig {
  const env = loadEnv(
    // Past the hard limit an engine is killed mid-job: recycling it after a job must come first.
    WorkerEnvSchema.refine(
      (c) => runIsolationOf(c) === 'process' || c.ENGINE_MAX_RSS_MB <= c.ENGINE_MEMORY_LIMIT_MB,
      {
        message: 'must not be below ENGINE_MAX_RSS_MB (an engine is recycled above that after a job)',
        path: ['ENGINE_MEMORY_LIMIT_MB'],
      },
    )
      .refine(
        // The alias and the new name must not say two things.
        (c) =>
          c.RUN_ISOLATION === undefined ||
          c.REUSE_SANDBOX === undefined ||
          c.REUSE_SANDBOX === (c.RUN_ISOLATION !== 'process'),
        {
          message:
            'must agree with RUN_ISOLATION, which replaces it (true: shared or isolate; false: process)',
          path: ['REUSE_SANDBOX'],
        },
      )
      .refine((c) => (c.WORKER_TOKEN === undefined) !== (c.WORKER_TOKEN_FILE === undefined), {
        message: 'set exactly one of WORKER_TOKEN and WORKER_TOKEN_FILE',
        path: ['WORKER_TOKEN'],
      })
      .refine(
        // Two policies would leave it to the reader which one holds: refused rather than guessed.
        (c) => c.EGRESS === undefined || c.CODE_STEP_EGRESS === undefined || c.EGRESS === c.CODE_STEP_EGRESS,
        {
          message: 'must not differ from EGRESS, which replaces it (set EGRESS only)',
          path: ['CODE_STEP_EGRESS'],
        },
      ),
    source,
  );
  const workerId = env.WORKER_ID ?? `${hostname().replaceAll(/[^A-Za-z0-9._-]/g, '_')}-${process.pid}`;
  return {
    appUrl: env.APP_URL,
    workerToken: env.WORKER_TOKEN ?? readTokenFile(env.WORKER_TOKEN_FILE ?? ''),
    workerTokenFile: env.WORKER_TOKEN_FILE === undefined ? null : path.resolve(env.WORKER_TOKEN_FILE),
    enginePidNamespace: env.ENGINE_PID_NAMESPACE,
    workerId,
    logLevel: env.LOG_LEVEL,
    cacheDir: path.resolve(env.CACHE_DIR ?? path.join(tmpdir(), `flowbox-worker-${workerId}`)),
    cacheDirTemporary: env.CACHE_DIR === undefined,
    engineBundle: env.ENGINE_BUNDLE === undefined ? defaultEngineBundle() : path.resolve(env.ENGINE_BUNDLE),
    engineSnapshot: env.ENGINE_SNAPSHOT,
    sandbox: sandboxOf(env),
    engineMemoryLimitBytes: env.ENGINE_MEMORY_LIMIT_MB * 1024 * 1024,
    executionMode: env.EXECUTION_MODE,
    isolateMaxRuns: env.ISOLATE_MAX_RUNS,
    egress: parseEgressPolicy(env.EGRESS ?? env.CODE_STEP_EGRESS ?? DEFAULT_EGRESS_POLICY_TEXT),
    fetchLimits: {
      maxInFlight: env.CODE_STEP_FETCH_MAX_IN_FLIGHT,
      maxBufferedBytes: env.CODE_STEP_FETCH_MAX_BUFFERED_MB * MIB,
    },
    metrics: env.METRICS_PORT === undefined ? null : { host: env.METRICS_HOST, port: env.METRICS_PORT },
    shutdownGraceMs: env.SHUTDOWN_GRACE_SECONDS * 1000,
    engineCpuProfDir: env.ENGINE_CPU_PROF_DIR === undefined ? null : path.resolve(env.ENGINE_CPU_PROF_DIR),
    tracing:
      env.OTEL_EXPORTER_OTLP_ENDPOINT === undefined
        ? null
        : { endpoint: env.OTEL_EXPORTER_OTLP_ENDPOINT, serviceName: env.OTEL_SERVICE_NAME },
    pollAhead: env.WORKER_POLL_AHEAD,
  };
}

type WorkerEnv = z.output<typeof WorkerEnvSchema>;

function readTokenFile(file: string): string {
  let token: string;
  try {
    token = readFileSync(file, 'utf8').trim();
  } catch (error) {
    throw new ConfigError(
      `invalid configuration:\n  WORKER_TOKEN_FILE: cannot read ${file}: ${String(error)}`,
    );
  }
  if (token === '') throw new ConfigError(`invalid configuration:\n  WORKER_TOKEN_FILE: ${file} is empty`);
  return token;
}

/** RUN_ISOLATION, else its alias REUSE_SANDBOX (true: shared, false: process), else isolate. */
function runIsolationOf(env: Pick<WorkerEnv, 'RUN_ISOLATION' | 'REUSE_SANDBOX'>): RunIsolation {
  if (env.RUN_ISOLATION !== undefined) return env.RUN_ISOLATION;
  if (env.REUSE_SANDBOX === undefined) return 'isolate';
  return env.REUSE_SANDBOX ? 'shared' : 'process';
}

/** The RUN_ISOLATION a sandbox config was made from. */
export function runIsolationOfSandbox(sandbox: SandboxConfig): RunIsolation {
  if (!sandbox.reuse) return 'process';
  return sandbox.isolate === undefined ? 'shared' : 'isolate';
}

function sandboxOf(env: WorkerEnv): SandboxConfig {
  const isolation = runIsolationOf(env);
  if (isolation === 'process') return { reuse: false, prewarm: env.PREWARM };
  const reused = {
    reuse: true,
    maxJobs: env.ENGINE_MAX_JOBS,
    maxRssBytes: env.ENGINE_MAX_RSS_MB * 1024 * 1024,
  } as const;
  return isolation === 'isolate' ? { ...reused, isolate: { prewarm: env.PREWARM } } : reused;
}

/**
 * Resolved like `import.meta.resolve` would, through the package's `exports`; createRequire
 * because vitest's module runner does not provide `import.meta.resolve`. The file exists only
 * after `pnpm build`.
 */
export function defaultEngineBundle(): string {
  try {
    return createRequire(import.meta.url).resolve('@flowbox/engine/bundle');
  } catch (error) {
    throw new ConfigError(
      `invalid configuration:\n  ENGINE_BUNDLE: unset, and @flowbox/engine/bundle is not built (run \`pnpm build\`): ${String(error)}`,
    );
  }
}
