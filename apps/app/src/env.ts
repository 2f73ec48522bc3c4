import { randomUUID } from 'node:crypto';
import { envFields, loadEnv } from '@flowbox/node-kit';
import { DEFAULT_LOOP_MAX_ITERATIONS } from '@flowbox/protocol';
import { DEFAULT_SERVICE_NAMES } from '@flowbox/tracing';
import { z } from 'zod';
import { pieceEnvFields } from './env-pieces.ts';
import { storeEnvFields } from './env-stores.ts';
import { webhookEnvFields } from './env-webhooks.ts';

/** The least FLOW_MAX_DEPTH may be: flows nest routers and loops at least this deep. */
const FLOW_MIN_DEPTH = 8;

/**
 * Every variable the app reads. Listed in README.md and docs/configuration.md, in this order: the
 * groups of env-*.ts are spread where they stand.
 */
export const AppEnvSchema = z.object({
  HOST: z
    .string()
    .default('127.0.0.1')
    .describe('Address the HTTP server listens on; `0.0.0.0` in containers.'),
  PORT: envFields
    .port(3000)
    .describe('HTTP port: webhooks, the flow and run API, engine callbacks, worker channel.'),
  LOG_LEVEL: envFields.logLevel().describe('pino log level.'),
  INSTANCE_ID: z
    .string()
    .regex(/^[A-Za-z0-9_.-]{1,64}$/, 'must be 1-64 letters, digits, _ . or -')
    .default(() => randomUUID())
    .describe(
      "Names this instance's sync-response channel in Redis; must be unique among running apps. Defaults to a random UUID at each start.",
    ),
  ...storeEnvFields,
  API_KEY: z
    .string()
    .min(16, 'must be at least 16 characters')
    .describe('Required on the management API (`/v1/flows`, `/v1/runs`) as `authorization: Bearer <key>`.'),
  API_KEY_MAX_FAILURES: envFields
    .positiveInt(20)
    .describe(
      "Wrong API keys one source address may send within API_KEY_FAILURE_WINDOW_SECONDS; past it each wrong key is answered 429 (`API_KEY_RATE_LIMITED`, `retry-after`: the seconds left in the window) instead of 401. Counted in Redis under REDIS_PREFIX, so every app shares the count (while Redis is down wrong keys are answered 401 and not counted). The right key is never counted nor refused, so callers sharing an address with a guesser are not locked out; the key's length is what keeps it from being guessed (use a random one). The address is the TCP peer (IPv6 by its /64): behind a proxy, the proxy's. Wrong `METRICS_TOKEN`s on `/metrics` are limited the same way, in a count of their own.",
    ),
  API_KEY_FAILURE_WINDOW_SECONDS: envFields
    .positiveInt(60)
    .describe(
      "The window API_KEY_MAX_FAILURES counts over, from an address's first wrong key. The address's first wrong key in a window, and the one that reaches the limit, are logged (warn, with the address); the others only counted (`flowbox_api_key_refused_total`).",
    ),
  TOKEN_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .describe('Signs engine and worker tokens (HS256). Changing it invalidates every worker token.'),
  CONNECTIONS_KEY: aesKey()
    .optional()
    .describe(
      'Encrypts connection values in Postgres (AES-256-GCM): 32 random bytes, base64 (`openssl rand -base64 32`). Unset: the app starts only while no connection exists, and POST /v1/connections fails. `pnpm dev` generates one and keeps it in DATA_DIR/connections-key.',
    ),
  CONNECTIONS_KEY_PREVIOUS: aesKey()
    .optional()
    .describe(
      'The key CONNECTIONS_KEY replaces, during a rotation: values sealed under it still open, and each app seals them again under CONNECTIONS_KEY at start. Remove it once every app has started with the new key.',
    ),
  ...webhookEnvFields,
  FLOW_MAX_DEPTH: z.coerce
    .number()
    .int()
    .min(FLOW_MIN_DEPTH)
    .max(64)
    .default(FLOW_MIN_DEPTH)
    .describe(
      "Deepest nesting of routers and loops in a flow (a loop in a router's branch is 2); a deeper definition is refused 400 (`INVALID_FLOW`) when it is created. At least 8.",
    ),
  FLOW_MAX_STEPS: envFields
    .positiveInt(200)
    .describe(
      "Most steps one flow may hold, counted across its routers' branches and its loops' bodies (a router or loop counts as a step too); past it a definition is refused 400 (`INVALID_FLOW`) when it is created. Versions stored before a change keep running.",
    ),
  SUBFLOW_MAX_DEPTH: z.coerce
    .number()
    .int()
    .min(1)
    .max(100)
    .default(5)
    .describe(
      'Longest chain of sub-flows: a run started by a `flow` step is 1 deep, its own child 2; a `flow` step of a run this deep fails `SUBFLOW_TOO_DEEP` and starts nothing, which stops a flow that starts itself.',
    ),
  HTTP_REQUEST_TIMEOUT_SECONDS: envFields
    .positiveInt(30)
    .describe(
      'Longest a client may take to send a whole request, headers and body; a slower one is answered 408 and disconnected. Does not limit how long a sync webhook then waits for its flow.',
    ),
  FLOW_TIMEOUT_SECONDS: envFields
    .positiveInt(60)
    .describe('Longest a run may take; past it the worker stops the engine and the run ends TIMEOUT.'),
  RUN_MAX_ATTEMPTS: envFields
    .positiveInt(2)
    .describe(
      'How many times a run is started when its engine crashes or its worker is lost (a flow that fails, times out or succeeds is never retried). A retry runs the whole flow again: steps before the crash run twice (docs/guarantees.md). 1: never retry.',
    ),
  CODE_STEP_TIMEOUT_MS: envFields
    .positiveInt(5_000)
    .describe('Longest one code step may run in its isolate.'),
  CODE_STEP_MEMORY_MB: z.coerce
    .number()
    .int()
    .min(8)
    .max(4096)
    .default(64)
    .describe('Memory limit of the isolate a code step runs in.'),
  RUN_LOG_MAX_BYTES: envFields
    .positiveInt(10_485_760)
    .describe(
      "Largest run log an engine may upload to S3. A run's steps past it keep their status, error and timing; their inputs or outputs are left out of the log (a `dropped` marker, counted in the log's `dropped`), never the run's result.",
    ),
  RUN_CHECKPOINT_MAX_BYTES: envFields
    .positiveInt(16 * 1024 * 1024)
    .describe(
      "Largest checkpoint an engine may upload to S3 when its run pauses: every finished step's output as the step returned it. A run whose checkpoint is larger fails `CHECKPOINT_FAILED` instead of pausing.",
    ),
  PAUSE_MIN_MS: z.coerce
    .number()
    .int()
    .min(0)
    .default(1_000)
    .describe(
      'A `delay` (or a retry backoff) shorter than this sleeps in place on its worker; one at least this long pauses the run (PAUSED, no worker held) and a timer resumes it.',
    ),
  RUN_MAX_PAUSE_DAYS: z.coerce
    .number()
    .int()
    .min(1)
    .max(3650)
    .default(30)
    .describe(
      'The longest a run may wait at one step: a `delay` past it fails `INVALID_DELAY`, and a `wait` or waiting sub-flow without a `timeout` times out after it (`WAIT_TIMEOUT`).',
    ),
  PUBLIC_URL: envFields
    .url()
    .optional()
    .describe(
      "The app's address as callers reach it (scheme, host, port, any path prefix), for the URLs flowbox hands out: a `wait` step's resume, approve and reject URLs. Unset: the address the app listens on (`http://HOST:PORT`, 127.0.0.1 for 0.0.0.0), which only callers on the same network can reach.",
    ),
  WAIT_URL_SECRET: z
    .string()
    .min(32, 'must be at least 32 characters')
    .optional()
    .describe(
      'Signs the tokens of wait URLs (each run gets a key HMAC-SHA256(secret, run id), each URL the HMAC of its step path under that key). Set it in production, the same on every app; changing it invalidates every wait URL handed out. Unset: derived from TOKEN_SECRET, so wait URLs then change with it.',
    ),
  LOOP_MAX_ITERATIONS: envFields
    .positiveInt(DEFAULT_LOOP_MAX_ITERATIONS)
    .describe(
      'Most items one loop step may run in a run; a loop over more fails `LOOP_TOO_MANY_ITERATIONS` before its first iteration.',
    ),
  QUEUE_DIRECT_HANDOFF: envFields
    .boolean(true)
    .describe(
      "A webhook accepted while one of this app's workers waits for a job hands the run to it at once, not through the BullMQ queue (nothing waits in the queue then, so no run is overtaken); its row in Postgres stays its durable record. `false`: every run goes through the queue.",
    ),
  QUEUE_NEXT_WITH_RESULT: envFields
    .boolean(true)
    .describe(
      "A worker that reports a job's result gets its next job with the acknowledgement, leased in the same Redis call that completes the job. `false`: it polls for it (one more Redis fetch per job under a backlog).",
    ),
  QUEUE_HELD_RUNS_MAX: z.coerce
    .number()
    .int()
    .min(0)
    .default(64)
    .describe(
      "Most runs an app keeps in memory for its own workers: a run accepted while every worker of this app is busy waits there for the first of them to finish (after the jobs queued before it), whose result's acknowledgement carries it: no Redis call once the queue is empty. Held runs go to the queue once the oldest has waited 1 s (a quarter of RECONCILE_AFTER_SECONDS if less), or as the app closes; their rows stay their durable record. Not with FLOW_MAX_CONCURRENT_RUNS or QUEUE_DIRECT_HANDOFF=false. 0: every such run is queued.",
    ),
  WORKER_POLL_SECONDS: envFields
    .positiveInt(10)
    .describe("How long a worker's poll waits for a job before it is answered `idle`."),
  SHUTDOWN_GRACE_SECONDS: envFields
    .positiveInt(10)
    .describe(
      "On SIGTERM, how long the app may take to answer its sync callers and close before it exits anyway (exit code 1). Keep it below the orchestrator's grace period.",
    ),
  METRICS_TOKEN: z
    .string()
    .min(16, 'must be at least 16 characters')
    .optional()
    .describe(
      'When set, `GET /metrics` requires `authorization: Bearer <token>` and answers 401 without it; wrong tokens from one address are limited as wrong API keys are (API_KEY_MAX_FAILURES, then 429; counted in `flowbox_metrics_token_refused_total`). Unset: /metrics is open (it holds counts, no flow id and no secret).',
    ),
  SHUTDOWN_DRAIN_SECONDS: z.coerce
    .number()
    .int()
    .min(0)
    .default(5)
    .describe(
      "On SIGTERM, how long the app first goes on serving while `/health/ready` says 503 (so a load balancer stops sending it traffic), answering with `connection: close` so no client reuses a socket about to close; then it closes within SHUTDOWN_GRACE_SECONDS. The orchestrator's grace period must cover both (the Kubernetes manifests' does). 0: close at once (`pnpm dev`'s restarts).",
    ),
  RECONCILE_AFTER_SECONDS: envFields
    .positiveInt(5)
    .describe(
      'A run QUEUED this long whose job is not in Redis (Redis restarted empty, a failover lost it) is enqueued again by the reconciler, which every app runs, one at a time, every half of this. Runs RUNNING past FLOW_TIMEOUT_SECONDS plus 10 s whose job is gone take the lost-worker path (docs/operations.md).',
    ),
  SCHEDULE_MIN_INTERVAL_SECONDS: envFields
    .positiveInt(60)
    .describe(
      "Shortest interval a schedule trigger may have: an `every` trigger's `seconds`, and the gap between the ticks of a 6-field cron expression. A flow under it is refused 400 at create and at publish; flows published before it was raised keep their schedule.",
    ),
  POLL_MIN_INTERVAL_SECONDS: envFields
    .positiveInt(60)
    .describe(
      "Shortest `intervalSeconds` a polling trigger may have (default 300 when the trigger's input names none). A flow or version under it is refused 400 when it is created; flows published before it was raised keep their interval.",
    ),
  POLL_MAX_ITEMS: envFields
    .positiveInt(1000)
    .describe(
      "Most new items one poll starts runs for: the rest wait for the next poll, and the trigger's state is not advanced past what was started (docs/triggers.md).",
    ),
  SCHEDULE_LATE_LIMIT_SECONDS: envFields
    .positiveInt(60)
    .describe(
      "A schedule tick not fired within this many seconds of its time (every app was down or stalled) is missed: its trigger's `catchUp` decides whether the last missed tick fires (`last`) or is recorded as missed (`none`, the default). Ticks within it fire late (docs/triggers.md).",
    ),
  RUN_RETENTION_DAYS: z.coerce
    .number()
    .int()
    .min(0)
    .default(30)
    .describe(
      "Finished runs older than this many days are deleted with their S3 logs (`runs/<runId>/log.json`), in batches of 10,000 for up to a minute a pass (about 12,000 runs a second on 2 shared cores), by one app at a time, every minute; a re-run of a deleted run answers 410. Schedule ticks as old go too, each flow's latest kept. 0: keep every run.",
    ),
  REFUSED_DELIVERIES_PER_FLOW: z.coerce
    .number()
    .int()
    .min(0)
    .max(10_000)
    .default(100)
    .describe(
      'Webhooks refused before any run existed (bad signature, body too large or not parsable, queue full, flow disabled or unpublished) kept per flow, newest first, for `GET /v1/flows/{flowId}/deliveries/refused`, `flowbox flow refused` and the inspector: time, code and message, source address and headers without credentials. Older ones go past this count, and all after RUN_RETENTION_DAYS. Written in one batch a second; each flow gets at most 10 rows a second on each app, further refusals counting into the last (`suppressed`). 0: none kept.',
    ),
  SEED_BENCHMARK_FLOW: envFields
    .boolean(false)
    .describe(
      "Create and publish the benchmark flows at start (`benchmark`: webhook, math helper, code step, response; `benchmark-loop100`: a loop over 100 items; `benchmark-router`: a router before the benchmark flow's steps; `benchmark-pause5s`, `benchmark-delay1100ms`, `benchmark-pause1h`: code, a delay of that length, code, response; `benchmark-nodelay`: the same without the delay). Their webhooks run code steps for anyone who calls them, so seeding is off unless asked for: `pnpm dev`, the tests and the benchmark turn it on.",
    ),
  OTEL_EXPORTER_OTLP_ENDPOINT: envFields
    .url()
    .optional()
    .describe(
      'Base URL of an OpenTelemetry collector (OTLP/HTTP, e.g. `http://otel-collector:4318`): one trace per run is exported to `<url>/v1/traces` as JSON (docs/operations.md, Tracing). Unset: no tracing, and no OpenTelemetry SDK loaded.',
    ),
  OTEL_SERVICE_NAME: z
    .string()
    .min(1)
    .default(DEFAULT_SERVICE_NAMES.app)
    .describe("The app's `service.name` in its spans, when tracing is on."),
  FLOW_CACHE_MAX_ENTRIES: envFields
    .positiveInt(10_000)
    .describe(
      'Flows whose webhook lookup (published version, enabled, verification) the app keeps in memory for a second, unknown ids included; past this or FLOW_CACHE_MAX_BYTES the least recently called go first. A dropped flow costs its next webhook one Postgres statement.',
    ),
  FLOW_CACHE_MAX_BYTES: envFields
    .positiveInt(16 * 1024 * 1024)
    .describe(
      'Bytes of those lookups the app keeps (each counted as its JSON, so the heap holds somewhat more). 16 MiB: 10,000 flows of up to about 1.6 KiB each (a flow with no signature settings is about 200 bytes).',
    ),
  DISPATCH_CACHE_MAX_ENTRIES: envFields
    .positiveInt(10_000)
    .describe(
      'Flow versions, and piece versions, whose bundle and archive records the app keeps for dispatching their jobs (each its own cache of this many, with the presigned download URLs as many again); past this or DISPATCH_CACHE_MAX_BYTES the least recently dispatched go first. A dropped one costs its next job one Postgres statement and one URL signature.',
    ),
  DISPATCH_CACHE_MAX_BYTES: envFields
    .positiveInt(16 * 1024 * 1024)
    .describe(
      'Bytes of bundle records, and of piece-archive records, the app keeps for dispatching (each counted as its JSON).',
    ),
  ...pieceEnvFields,
});

/** 32 bytes in base64 (decoded where the cipher is made, app.ts). */
function aesKey() {
  return z
    .string()
    .regex(
      /^[A-Za-z0-9+/]{43}=$/,
      'must be 32 bytes in base64 (44 characters, e.g. `openssl rand -base64 32`)',
    );
}

export type AppConfig = z.infer<typeof AppEnvSchema>;

export function loadConfig(source: Record<string, string | undefined>): AppConfig {
  return loadEnv(AppEnvSchema, source);
}
