import { z } from 'zod';
import { SerializedErrorSchema } from './errors.ts';
import { FlowDefinitionSchema, RunLimitsSchema, TriggerPayloadSchema } from './flow.ts';
import { FinalRunStatusSchema } from './run.ts';

/**
 * worker ⇄ app over socket.io. The worker authenticates with `auth: { token }` (a worker
 * token) and only ever emits; the app answers through the ack.
 *
 *   worker ── 'poll' ─────────▶ app   ack: PollReply (a job or idle after the long-poll window)
 *   worker ── 'job-result' ───▶ app   ack: JobResultAck
 */
export const SOCKET_EVENTS = { poll: 'poll', jobResult: 'job-result' } as const;

export const PollRequestSchema = z.object({
  version: z.literal(1),
  type: z.literal('poll'),
  workerId: z.string().min(1),
});
export type PollRequest = z.infer<typeof PollRequestSchema>;

/** A job as handed to a worker: everything the engine needs, and nothing it was not meant to have. */
export const DispatchedJobSchema = z.object({
  jobId: z.string(),
  runId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  flow: FlowDefinitionSchema,
  trigger: TriggerPayloadSchema,
  /** JWT scoped to this run; the engine sends it on every callback. */
  engineToken: z.string(),
  /** Presigned PUT for the run log, and the key it writes. */
  logUpload: z.object({ url: z.url(), key: z.string(), maxBytes: z.number().int().positive() }),
  limits: RunLimitsSchema,
  /** When the run was accepted (epoch ms), to measure queue time. */
  acceptedAt: z.number().int(),
});
export type DispatchedJob = z.infer<typeof DispatchedJobSchema>;

export const PollReplySchema = z.discriminatedUnion('type', [
  z.object({ version: z.literal(1), type: z.literal('job'), job: DispatchedJobSchema }),
  z.object({ version: z.literal(1), type: z.literal('idle') }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type PollReply = z.infer<typeof PollReplySchema>;

/** Where a worker's time for one job went (milliseconds). */
export const JobTimingsSchema = z.object({
  queueMs: z.number().nonnegative(),
  provisionMs: z.number().nonnegative(),
  bootMs: z.number().nonnegative(),
  runMs: z.number().nonnegative(),
  logPersistMs: z.number().nonnegative(),
  workerBusyMs: z.number().nonnegative(),
});
export type JobTimings = z.infer<typeof JobTimingsSchema>;

export const JobResultSchema = z.object({
  version: z.literal(1),
  type: z.literal('job-result'),
  workerId: z.string(),
  jobId: z.string(),
  runId: z.string(),
  status: FinalRunStatusSchema,
  error: SerializedErrorSchema.optional(),
  timings: JobTimingsSchema,
});
export type JobResult = z.infer<typeof JobResultSchema>;

export const JobResultAckSchema = z.discriminatedUnion('type', [
  z.object({ version: z.literal(1), type: z.literal('ok') }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type JobResultAck = z.infer<typeof JobResultAckSchema>;
