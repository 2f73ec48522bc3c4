import { z } from 'zod';
import { LogUploadSchema, PieceRefSchema } from './artifacts.ts';
import { CallbackAnswerSchema, EngineCallbackSchema } from './callbacks.ts';
import { ResolvedConnectionsSchema } from './connections.ts';
import { RunResumeSchema, WaitUrlsSchema } from './durable.ts';
import { EgressPolicySchema, FetchLimitsSchema } from './egress.ts';
import { SerializedErrorSchema } from './errors.ts';
import { RunLimitsSchema, TriggerPayloadSchema } from './flow.ts';
import { EnginePollJobSchema, PollOutcomeSchema } from './poll.ts';
import { RunOutcomeSchema } from './run.ts';
import { StepTestSchema } from './step-test.ts';
import { MAX_ENGINE_SPANS, SpanRecordSchema, TraceparentSchema } from './trace.ts';

/**
 * worker ⇄ engine over the child-process IPC channel.
 *
 *   engine ── 'ready' ──────────▶ worker   once, when it can take a job
 *   worker ── 'preload' ────────▶ engine   optional, before any job: import these pieces, make the isolate
 *   worker ── 'execute' ────────▶ engine   one job (requestId correlates the result)
 *   engine ── 'log' ────────────▶ worker   any time; the worker writes it to its logger
 *   engine ── 'callback' ───────▶ worker   progress or the response, for the job in progress: the
 *                                          worker forwards it on its socket to the app (callbacks.ts)
 *   worker ── 'callback-answer' ▶ engine   the app's answer to it (callId correlates)
 *   engine ── 'execute-result' ─▶ worker   once per execute, as soon as the steps end
 *   engine ── 'log-persisted' ──▶ worker   after an execute-result with `logPending`: how the run
 *                                          log's upload ended (the next job may run meanwhile)
 *   worker ── 'execute-poll' ───▶ engine   a polling trigger's poll (poll.ts)
 *   engine ── 'poll-result' ────▶ worker   once per execute-poll
 */
/**
 * Where flows run. SANDBOX_CODE_ONLY (default): code steps in isolated-vm, the engine a plain
 * child process. SANDBOXED: the same, with the whole engine inside a bubblewrap sandbox whose
 * only way out is the worker's relay. UNSANDBOXED: code steps in the engine itself, for
 * comparison only.
 */
export const ExecutionModeSchema = z.enum(['SANDBOX_CODE_ONLY', 'SANDBOXED', 'UNSANDBOXED']);
export type ExecutionMode = z.infer<typeof ExecutionModeSchema>;

/**
 * How runs are separated from each other (the worker's RUN_ISOLATION). `shared`: one engine
 * process runs job after job in its own realm; `process`: a fresh engine process per run;
 * `isolate`: one engine process, each run entirely inside a fresh V8 context made from a
 * snapshot, in an isolate that serves a bounded number of runs.
 */
export const RunIsolationSchema = z.enum(['shared', 'isolate', 'process']);
export type RunIsolation = z.infer<typeof RunIsolationSchema>;

export const EngineJobSchema = z.object({
  runId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  /** The verified flow bundle in the worker's cache (a FlowBundle JSON file). */
  bundlePath: z.string(),
  /** Unpacked, verified piece archives in the worker's cache: `<dir>/manifest.json`, `<dir>/index.mjs`. */
  pieces: z.array(PieceRefSchema.extend({ dir: z.string() })),
  executionMode: ExecutionModeSchema,
  /** `isolate`: the run executes in a fresh context from its pieces' snapshot; absent or otherwise, in the engine's realm. */
  isolation: RunIsolationSchema.optional(),
  /**
   * `isolate`: how many runs one isolate of the engine serves, each in a fresh context, before a
   * run gets a fresh isolate (the worker's ISOLATE_MAX_RUNS); absent, the engine's default.
   */
  isolateMaxRuns: z.number().int().positive().optional(),
  trigger: TriggerPayloadSchema,
  /** The run's connections, as dispatched (memory only); absent when the flow uses none. */
  connections: ResolvedConnectionsSchema.optional(),
  /** Base URL of the app the engine calls back, e.g. http://127.0.0.1:3000 */
  appUrl: z.url(),
  engineToken: z.string(),
  logUpload: LogUploadSchema,
  /**
   * Where the engine uploads the run's checkpoint if it pauses (presigned, bounded); present when
   * the flow version can pause (a delay, wait, waiting sub-flow or retry step).
   */
  checkpointUpload: LogUploadSchema.optional(),
  /** A resumed run: the checkpoint to replay and what arrived for its waiting points. */
  resume: RunResumeSchema.optional(),
  /** The flow has wait steps: how the engine writes their URLs into the templates. */
  waitUrls: WaitUrlsSchema.optional(),
  limits: RunLimitsSchema,
  /** Which hosts this run's code steps (`fetch`) and pieces (`ctx.fetch`) may call (the worker's EGRESS). */
  egress: EgressPolicySchema,
  /** How much this run's `fetch` calls may hold at once (the worker's CODE_STEP_FETCH_* settings). */
  fetchLimits: FetchLimitsSchema,
  /**
   * The worker's job span, when the run is traced: the engine then records its spans under it
   * and sends this run's callbacks with a `traceparent` header (trace.ts).
   */
  traceparent: TraceparentSchema.optional(),
  /**
   * A step test (DispatchedJob.test): this one step runs over the sample data, with no progress,
   * no response and no run log; the outcome's one step is the test's answer.
   */
  test: StepTestSchema.optional(),
});
export type EngineJob = z.infer<typeof EngineJobSchema>;

/**
 * What a prewarmed engine does before its job, so its first job does not: import the pieces the
 * worker's jobs have been using. Only code from the worker's verified piece cache: no job's data.
 */
export const PreloadRequestSchema = z.object({
  pieces: EngineJobSchema.shape.pieces,
  /** The last job's code-step memory limit: the engine makes an isolate of that size and runs a trivial step in it. */
  codeStepMemoryMb: EngineJobSchema.shape.limits.shape.codeStepMemoryMb.optional(),
  /**
   * The app's base URL: the engine opens its keep-alive connection with a `GET /health/live`.
   * Never sent to a sandboxed engine, whose only way out is its relay.
   */
  appUrl: EngineJobSchema.shape.appUrl.optional(),
  /**
   * `isolate`: the next job runs in a context of its pieces' isolate snapshot, so the engine
   * builds that snapshot, its isolate and the first run's context now (instead of importing the
   * pieces into its own realm).
   */
  isolation: EngineJobSchema.shape.isolation,
  /** `isolate`: the job's `isolateMaxRuns`, for the isolate made ahead. */
  isolateMaxRuns: EngineJobSchema.shape.isolateMaxRuns,
});
export type PreloadRequest = z.infer<typeof PreloadRequestSchema>;

export const WorkerToEngineSchema = z.discriminatedUnion('type', [
  PreloadRequestSchema.extend({ version: z.literal(1), type: z.literal('preload') }),
  z.object({
    version: z.literal(1),
    type: z.literal('callback-answer'),
    callId: z.number().int(),
    answer: CallbackAnswerSchema,
  }),
  z.object({
    version: z.literal(1),
    type: z.literal('execute'),
    requestId: z.string(),
    job: EngineJobSchema,
  }),
  z.object({
    version: z.literal(1),
    type: z.literal('execute-poll'),
    requestId: z.string(),
    job: EnginePollJobSchema,
  }),
]);
export type WorkerToEngine = z.infer<typeof WorkerToEngineSchema>;

export const LogLevelSchema = z.enum(['trace', 'debug', 'info', 'warn', 'error', 'fatal']);

/** How the run ended, forwarded untouched to the app, and what the engine measured of it. */
export const ExecuteResultSchema = z.object({
  version: z.literal(1),
  type: z.literal('execute-result'),
  requestId: z.string(),
  outcome: RunOutcomeSchema,
  /** runMs: the flow with its callbacks, without the log upload; logPersistMs: the upload. */
  timings: z.object({
    runMs: z.number().nonnegative(),
    logPersistMs: z.number().nonnegative(),
  }),
  /** What the engine recorded of a traced run, for the worker to export; absent when untraced. */
  spans: z.array(SpanRecordSchema).max(MAX_ENGINE_SPANS).optional(),
  /**
   * The outcome's `logKey` names where the log is going: the engine uploads it after this result
   * and says how that ended in a `log-persisted` with the same requestId.
   */
  logPending: z.literal(true).optional(),
});
export type ExecuteResult = z.infer<typeof ExecuteResultSchema>;

/** How a run log's upload that followed its result ended (`logError` absent: it is stored). */
export const LogPersistedSchema = z.object({
  version: z.literal(1),
  type: z.literal('log-persisted'),
  requestId: z.string(),
  runId: z.string(),
  logKey: z.string(),
  logError: SerializedErrorSchema.optional(),
  logPersistMs: z.number().nonnegative(),
  /** The `log.upload` span of a traced run, a child of its `engine.run`. */
  spans: z.array(SpanRecordSchema).max(1).optional(),
});
export type LogPersisted = z.infer<typeof LogPersistedSchema>;

export const EngineToWorkerSchema = z.discriminatedUnion('type', [
  z.object({ version: z.literal(1), type: z.literal('ready'), pid: z.number().int() }),
  z.object({
    version: z.literal(1),
    type: z.literal('log'),
    level: LogLevelSchema,
    msg: z.string(),
    data: z.record(z.string(), z.unknown()).optional(),
  }),
  ExecuteResultSchema,
  LogPersistedSchema,
  z.object({
    version: z.literal(1),
    type: z.literal('poll-result'),
    requestId: z.string(),
    outcome: PollOutcomeSchema,
  }),
  z.object({
    version: z.literal(1),
    type: z.literal('callback'),
    callId: z.number().int(),
    callback: EngineCallbackSchema,
  }),
]);
export type EngineToWorker = z.infer<typeof EngineToWorkerSchema>;
