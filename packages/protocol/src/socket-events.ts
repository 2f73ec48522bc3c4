import { z } from 'zod';
import { ArtifactDownloadSchema, LogUploadSchema, PieceDownloadSchema } from './artifacts.ts';
import { EngineCallbackSchema } from './callbacks.ts';
import { ResolvedConnectionsSchema } from './connections.ts';
import { RunResumeSchema, WaitUrlsSchema } from './durable.ts';
import { SerializedErrorSchema } from './errors.ts';
import { RunLimitsSchema, TriggerPayloadSchema } from './flow.ts';
import { RunIsolationSchema } from './ipc.ts';
import { DispatchedPollJobSchema } from './poll.ts';
import { RunOutcomeSchema } from './run.ts';
import { StepTestSchema } from './step-test.ts';
import { TraceparentSchema } from './trace.ts';

/**
 * worker ⇄ app over socket.io. The worker authenticates with `auth: { token }` (a worker
 * token) and only ever emits; the app answers through the ack.
 *
 *   worker ── 'poll' ─────────▶ app   ack: PollReply (a job or idle after the long-poll window);
 *                                     with `running`, ahead of the result of the job it names
 *   worker ── 'job-result' ───▶ app   ack: JobResultAck (with the next job when one waits)
 *   worker ── 'engine-callback' ▶ app ack: CallbackAnswer; its engine's progress or response,
 *                                     checked by the app as the HTTP callback is (callbacks.ts)
 *   worker ── 'poll-result' ───▶ app  ack: PollResultAck; a poll job's outcome (poll.ts)
 *   worker ── 'log-failed' ───▶ app   ack: LogFailedAck; a run's log upload, which ends after its
 *                                     result, failed: behind that result on the socket
 */
export const SOCKET_EVENTS = {
  poll: 'poll',
  jobResult: 'job-result',
  engineCallback: 'engine-callback',
  pollResult: 'poll-result',
  logFailed: 'log-failed',
} as const;

/** An engine's callback as its worker forwards it: the engine's `callback` untouched. */
export const EngineCallbackFrameSchema = z.object({
  version: z.literal(1),
  type: z.literal('engine-callback'),
  callback: EngineCallbackSchema,
});
export type EngineCallbackFrame = z.infer<typeof EngineCallbackFrameSchema>;

export const PollRequestSchema = z.object({
  version: z.literal(1),
  type: z.literal('poll'),
  workerId: z.string().min(1),
  /**
   * The job this worker still holds, whose last step (the response) its engine is sending: only
   * the log upload and result follow. The job this poll gets waits in the worker for that
   * result, instead of the poll waiting for the whole tail.
   */
  running: z.string().min(1).optional(),
});
export type PollRequest = z.infer<typeof PollRequestSchema>;

/** A job as handed to a worker: everything the engine needs, and nothing it was not meant to have. */
export const DispatchedJobSchema = z.object({
  jobId: z.string(),
  runId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  /** The flow bundle (presigned GET); the worker caches it by flowVersionId and checks its hash. */
  bundle: ArtifactDownloadSchema,
  /** The archives of every piece the flow uses (presigned GETs); cached by name, version and hash. */
  pieces: z.array(PieceDownloadSchema),
  trigger: TriggerPayloadSchema,
  /**
   * The connections the run's flow version references, decrypted by the app at this dispatch.
   * Held in memory only (never in Redis, the worker's cache or a log); absent when there are none.
   */
  connections: ResolvedConnectionsSchema.optional(),
  /** JWT scoped to this run; the engine sends it on every callback. */
  engineToken: z.string(),
  /** A presigned POST upload for the run log, bounded in size, and the key it writes. */
  logUpload: LogUploadSchema,
  /** A presigned POST for the checkpoint, when the flow version can pause (EngineJob.checkpointUpload). */
  checkpointUpload: LogUploadSchema.optional(),
  /** A resumed run (EngineJob.resume). */
  resume: RunResumeSchema.optional(),
  /** The flow has wait steps (EngineJob.waitUrls). */
  waitUrls: WaitUrlsSchema.optional(),
  limits: RunLimitsSchema,
  /** When the run was accepted (epoch ms), to measure queue time. */
  acceptedAt: z.number().int(),
  /** The app's dispatch span, when the run is traced (trace.ts). */
  traceparent: TraceparentSchema.optional(),
  /**
   * The isolation the flow version's pieces allow, decided by the app from the registry
   * (flow-isolation.ts): `isolate` when every piece can run in an isolate; `process` when one
   * imports a Node built-in and is not trusted (TRUSTED_PIECES); `shared` when every such piece
   * is trusted. A worker in `isolate` mode runs a `process` job in a fresh engine process and a
   * `shared` job in its engine's realm; workers in the other modes run every job their own way.
   * Absent: `isolate`.
   */
  isolation: RunIsolationSchema.optional(),
  /**
   * A step test (step-test.ts): the engine runs this one step and nothing else; `runId` is then
   * the test's id, which no run has. Absent for runs.
   */
  test: StepTestSchema.optional(),
});
export type DispatchedJob = z.infer<typeof DispatchedJobSchema>;

/**
 * On a job handed to a worker: it was accepted before the worker asked (before its last job was
 * leased to it, for a result's or a poll ahead's), so runs are queueing. The worker then takes its
 * next job with this one's result, in the Redis call that completes it, rather than polling ahead.
 */
const BacklogSchema = z.literal(true).optional();

export const PollReplySchema = z.discriminatedUnion('type', [
  z.object({
    version: z.literal(1),
    type: z.literal('job'),
    job: DispatchedJobSchema,
    backlog: BacklogSchema,
  }),
  /** A poll of a polling trigger (poll.ts), for a worker that holds no job: it answers with `poll-result`. */
  z.object({ version: z.literal(1), type: z.literal('poll-job'), job: DispatchedPollJobSchema }),
  z.object({ version: z.literal(1), type: z.literal('idle') }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type PollReply = z.infer<typeof PollReplySchema>;

const Ms = z.number().nonnegative();

/**
 * Where a worker's time for one job went (milliseconds): the latency anatomy.
 *   queueMs       accepted by the app → received by the worker
 *   provisionMs   bundle + pieces + engine bundle into the disk cache (cache hits are ~0)
 *   bootMs        fork → engine ready; 0 when a running engine was reused or prewarmed
 *   runMs         the flow with its callbacks, without the log upload
 *   logPersistMs  the run log's upload
 *   workerBusyMs  received → result ready: what sets a concurrency-1 worker's throughput
 */
export const JobTimingsSchema = z.object({
  queueMs: Ms,
  provisionMs: Ms,
  provision: z.object({ bundleMs: Ms, piecesMs: Ms, engineMs: Ms }).optional(),
  bootMs: Ms,
  runMs: z.number().nonnegative(),
  logPersistMs: z.number().nonnegative(),
  workerBusyMs: z.number().nonnegative(),
});
export type JobTimings = z.infer<typeof JobTimingsSchema>;

/** What the worker's cache and engine did for one job, for the run row, logs and tests. */
export const JobProvisioningSchema = z.object({
  bundle: z.enum(['hit', 'miss']),
  pieceHits: z.number().int().nonnegative(),
  pieceMisses: z.number().int().nonnegative(),
  engine: z.object({
    pid: z.number().int(),
    /** Jobs this engine process has run, this one included (1 in cold mode). */
    jobsServed: z.number().int().positive(),
    /** True when the engine was booted ahead of the job (prewarm) or reused (warm). */
    preBooted: z.boolean(),
  }),
});
export type JobProvisioning = z.infer<typeof JobProvisioningSchema>;

/** The run's outcome as the engine recorded it (or the worker, when no engine could), and its cost. */
export const JobResultSchema = z.object({
  version: z.literal(1),
  type: z.literal('job-result'),
  workerId: z.string(),
  jobId: z.string(),
  runId: z.string(),
  /** The engine's `execute-result.outcome` as it came, or the worker's own when no engine said. */
  outcome: RunOutcomeSchema,
  timings: JobTimingsSchema,
  /** Absent when the job failed before provisioning finished. */
  provisioning: JobProvisioningSchema.optional(),
  /** How the worker kept this run apart from others (its RUN_ISOLATION, or the job's fallback). */
  isolation: RunIsolationSchema.optional(),
  /**
   * The worker takes another job at once: the app may answer with the next waiting job, taken
   * in the same Redis call that completes this one, instead of waiting for a poll.
   */
  wantsNext: z.boolean().optional(),
  /** The worker's job span, when the run is traced: the app's final write is its child. */
  traceparent: TraceparentSchema.optional(),
});
export type JobResult = z.infer<typeof JobResultSchema>;

export const JobResultAckSchema = z.discriminatedUnion('type', [
  /** `job`: the next job for this worker, when it asked and one was waiting. */
  z.object({
    version: z.literal(1),
    type: z.literal('ok'),
    job: DispatchedJobSchema.optional(),
    backlog: BacklogSchema,
  }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type JobResultAck = z.infer<typeof JobResultAckSchema>;

/**
 * The log upload of a run whose result named `logKey` (its engine uploads after the result)
 * failed: the app clears the run's log key and records why. Sent behind that run's result.
 */
export const LogFailedSchema = z.object({
  version: z.literal(1),
  type: z.literal('log-failed'),
  workerId: z.string(),
  jobId: z.string(),
  runId: z.string(),
  logKey: z.string(),
  logError: SerializedErrorSchema,
});
export type LogFailed = z.infer<typeof LogFailedSchema>;

export const LogFailedAckSchema = z.discriminatedUnion('type', [
  z.object({ version: z.literal(1), type: z.literal('ok') }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type LogFailedAck = z.infer<typeof LogFailedAckSchema>;
