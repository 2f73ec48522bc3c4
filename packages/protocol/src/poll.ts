import { z } from 'zod';
import { ArtifactDownloadSchema, PieceDownloadSchema, PieceRefSchema } from './artifacts.ts';
import { EgressPolicySchema, FetchLimitsSchema } from './egress.ts';
import { SerializedErrorSchema } from './errors.ts';

/**
 * Polls: the job kind beside runs. A published flow whose trigger polls (`strategy: 'polling'`)
 * is polled by the app on an interval; each poll is a job that runs the trigger's `poll` in an
 * engine on a worker, under the worker's egress policy and execution mode, and answers the items
 * the source holds with their dedupe keys. The app keeps the state and starts the runs.
 *
 *   worker ── 'poll' ──────────▶ app     ack: PollReply `poll-job` (or a run job, or idle)
 *   worker ── 'execute-poll' ──▶ engine  the trigger's poll (requestId correlates)
 *   engine ── 'poll-result' ───▶ worker  once per execute-poll
 *   worker ── 'poll-result' ───▶ app     ack: PollResultAck
 */

/** What a poll found: each item with its dedupe key, and the trigger's next state; or why it failed. */
export const PollOutcomeSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('ok'),
    items: z.array(z.object({ key: z.string().min(1).max(1000), item: z.unknown() })),
    state: z.unknown(),
  }),
  z.object({ type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type PollOutcome = z.infer<typeof PollOutcomeSchema>;

/** A poll as handed to a worker: the flow's bundle (its trigger and input) and the trigger's piece. */
export const DispatchedPollJobSchema = z.object({
  /** The poll's lease: its result is taken only while the app still holds this lease. */
  jobId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  bundle: ArtifactDownloadSchema,
  pieces: z.array(PieceDownloadSchema),
  /** The trigger's state after the last poll whose items were recorded; null before any. */
  state: z.unknown(),
  /** The poll's bound: the flow timeout. */
  timeoutMs: z.number().int().positive(),
  /** The largest result (items and state, as JSON) the worker may send back (RUN_LOG_MAX_BYTES). */
  maxResultBytes: z.number().int().positive(),
  acceptedAt: z.number().int(),
});
export type DispatchedPollJob = z.infer<typeof DispatchedPollJobSchema>;

/** The poll as the worker hands it to its engine. */
export const EnginePollJobSchema = z.object({
  jobId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  /** The verified flow bundle in the worker's cache: its trigger names the piece, trigger and input. */
  bundlePath: z.string(),
  pieces: z.array(PieceRefSchema.extend({ dir: z.string() })),
  state: z.unknown(),
  /** Past this many bytes of items and state (as JSON) the poll fails POLL_FAILED, naming the bound. */
  maxResultBytes: z.number().int().positive(),
  egress: EgressPolicySchema,
  fetchLimits: FetchLimitsSchema,
});
export type EnginePollJob = z.infer<typeof EnginePollJobSchema>;

/** worker → app: a poll's outcome. */
export const PollResultSchema = z.object({
  version: z.literal(1),
  type: z.literal('poll-result'),
  workerId: z.string(),
  jobId: z.string(),
  flowVersionId: z.string(),
  outcome: PollOutcomeSchema,
  /** The poll in the engine, provisioning included. */
  pollMs: z.number().nonnegative(),
});
export type PollResult = z.infer<typeof PollResultSchema>;

export const PollResultAckSchema = z.discriminatedUnion('type', [
  z.object({ version: z.literal(1), type: z.literal('ok') }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: SerializedErrorSchema }),
]);
export type PollResultAck = z.infer<typeof PollResultAckSchema>;
