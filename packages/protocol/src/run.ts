import { z } from 'zod';
import { RunPauseSchema } from './durable.ts';
import { runStatusOf, type SerializedError, SerializedErrorSchema } from './errors.ts';

/** PAUSED: the run waits (a delay, a request, a child run, a retry's backoff) with no worker held. */
export const RunStatusSchema = z.enum([
  'QUEUED',
  'RUNNING',
  'PAUSED',
  'SUCCEEDED',
  'FAILED',
  'TIMEOUT',
  'INTERNAL_ERROR',
]);
export type RunStatus = z.infer<typeof RunStatusSchema>;

export const FINAL_RUN_STATUSES = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR'] as const;
export const FinalRunStatusSchema = z.enum(FINAL_RUN_STATUSES);
export type FinalRunStatus = z.infer<typeof FinalRunStatusSchema>;

export function isFinalRunStatus(status: RunStatus): status is FinalRunStatus {
  return (FINAL_RUN_STATUSES as readonly string[]).includes(status);
}

/**
 * SKIPPED: a router's branch that did not run (its `skipReason` says why). WAITING: a step of a
 * paused run that waits (a delay, a wait, a waiting sub-flow, a retry's backoff); its record is
 * replaced when the run resumes.
 */
export const StepStatusSchema = z.enum(['SUCCEEDED', 'FAILED', 'SKIPPED', 'WAITING']);

/** A failed attempt of a step with `retry`, before the one its result records. */
export const StepAttemptSchema = z.object({
  error: SerializedErrorSchema,
  startedAt: z.iso.datetime(),
  durationMs: z.number().nonnegative(),
});

/** One line a code step wrote with `console.*`, or a piece with `ctx.log`, as its step recorded it. */
export const ConsoleLineSchema = z.object({
  level: z.enum(['debug', 'info', 'log', 'warn', 'error']),
  message: z.string(),
});
export type ConsoleLine = z.infer<typeof ConsoleLineSchema>;

/** One executed step as the engine reports it and the run log records it. */
export const StepResultSchema = z.object({
  name: z.string(),
  /**
   * Where the step ran in the flow's tree (flow-tree.ts): `route/big/notify`, `each[3]/check`.
   * Absent in runs recorded before flows nested: the name is the path then.
   */
  path: z.string().optional(),
  /** `webhook/catch_webhook`, `math-helper/addition_math` or `code`. */
  kind: z.string(),
  status: StepStatusSchema,
  input: z.unknown(),
  output: z.unknown().optional(),
  error: SerializedErrorSchema.optional(),
  /** A code step's console output or a piece's `ctx.log` lines, capped (the last line says what was dropped). */
  logs: z.array(ConsoleLineSchema).optional(),
  /**
   * A FAILED step with `continueOnFailure`: the run went on, and later steps read its `output`,
   * `{ error: { code, message } }`. Its `error` is the failure as any failed step records it.
   */
  continued: z.literal(true).optional(),
  /** Why a SKIPPED step did not run, e.g. `branch big not taken`. */
  skipReason: z.string().optional(),
  /** A step with `retry`: the failed attempts before the one this result records, in order. */
  attempts: z.array(StepAttemptSchema).optional(),
  /** A resumed run's step that ran before it paused: its output comes from the checkpoint. */
  replayed: z.literal(true).optional(),
  /** A WAITING step: until when (a delay, a retry's next attempt) or what for. */
  waitingFor: z.string().optional(),
  startedAt: z.iso.datetime(),
  durationMs: z.number().nonnegative(),
});
export type StepResult = z.infer<typeof StepResultSchema>;

/**
 * How a run ended: one field (`outcome`) that every hop forwards untouched, so a field added here
 * reaches the run's row. The engine reports it to its worker (`execute-result`, IPC), the worker
 * to the app (`job-result`), and the app writes it in one statement.
 */
export const RunOutcomeSchema = z.object({
  /** PAUSED: the run waits; `pause` says where, and the engine uploaded its checkpoint first. */
  status: z.enum([...FINAL_RUN_STATUSES, 'PAUSED']),
  error: SerializedErrorSchema.optional(),
  /** The steps that ran, in order; empty when no engine reported (a crash, a timeout). */
  steps: z.array(StepResultSchema),
  /**
   * Where the run log is stored. The engine uploads it after reporting the outcome (its
   * execute-result says `logPending`): a failed upload then clears it on the run, with
   * logError. Null when no engine ran, or its upload failed (logError says why).
   */
  logKey: z.string().nullable(),
  logError: SerializedErrorSchema.optional(),
  /** Set exactly when status is PAUSED. */
  pause: RunPauseSchema.optional(),
});
export type RunOutcome = z.infer<typeof RunOutcomeSchema>;

/** The outcome of a run that no engine reported on: no steps, no log, the status its error gives. */
export function failedOutcome(error: SerializedError): RunOutcome & { status: FinalRunStatus } {
  return { status: runStatusOf(error.code), error, steps: [], logKey: null };
}

/** The run log the engine uploads to S3: everything about one run's execution. */
export const RunLogSchema = z.object({
  version: z.literal(1),
  runId: z.string(),
  flowId: z.string(),
  flowVersionId: z.string(),
  status: FinalRunStatusSchema,
  startedAt: z.iso.datetime(),
  finishedAt: z.iso.datetime(),
  steps: z.array(StepResultSchema),
  error: SerializedErrorSchema.optional(),
  /**
   * Steps whose input or output the log left out to stay within RUN_LOG_MAX_BYTES (each replaced
   * by a `{ dropped: "<n> bytes" }` marker); absent when nothing was left out.
   */
  dropped: z.number().int().positive().optional(),
});
export type RunLog = z.infer<typeof RunLogSchema>;

/** The response a flow's response step sends back to a sync webhook caller. */
export const FlowResponseSchema = z.object({
  status: z.number().int().min(100).max(599),
  headers: z.record(z.string(), z.string()),
  body: z.unknown(),
});
export type FlowResponse = z.infer<typeof FlowResponseSchema>;
