import { z } from 'zod';
import { ErrorCodeSchema } from './errors.ts';
import { FlowResponseSchema, StepResultSchema } from './run.ts';

/**
 * engine ─HTTP─▶ app. Every request carries `authorization: Bearer <engineToken>`, a JWT
 * whose subject is the run id in the path, and, when the run is traced, a `traceparent` header
 * naming the engine span it was sent from (trace.ts).
 *
 *   POST /v1/engine/runs/:runId/steps      StepReport       progress: the steps finished since
 *                                                             the last report, at most every
 *                                                             ENGINE_PROGRESS_INTERVAL_MS
 *   POST /v1/engine/runs/:runId/response   FlowResponseReport   the response step, with the
 *                                                             steps finished before it that no
 *                                                             progress report carried
 *
 * Every step before the response reaches the app once, in order, through one of these; a flow
 * that answers within the interval (most do) sends no progress report at all. How the run ended,
 * with every step, reaches the app once, in the worker's job result (the engine hands it to its
 * worker over IPC): an HTTP `finish` callback would repeat it at the cost of a request per run.
 *
 * Neither writes to Postgres. Progress and the response (with its steps) are kept in Redis before
 * the caller is answered, so `GET /v1/runs/:id` on any app shows them at once, and a run whose
 * worker dies keeps them. The run's record is written once, from the worker's job result.
 *
 * Each answers 204, or an error body `CallbackErrorBody` (`{ error: { code, message } }`).
 */
export const ENGINE_CALLBACK_PATHS = {
  steps: (runId: string) => `/v1/engine/runs/${encodeURIComponent(runId)}/steps`,
  response: (runId: string) => `/v1/engine/runs/${encodeURIComponent(runId)}/response`,
} as const;

/** How often a running flow reports progress: a long flow is visible live, a fast one costs nothing. */
export const ENGINE_PROGRESS_INTERVAL_MS = 250;

export const StepReportSchema = z.object({
  version: z.literal(1),
  type: z.literal('steps'),
  steps: z.array(StepResultSchema).min(1),
});
export type StepReport = z.infer<typeof StepReportSchema>;

export const FlowResponseReportSchema = z.object({
  version: z.literal(1),
  type: z.literal('flow-response'),
  response: FlowResponseSchema,
  /** The steps finished before the response step that no progress report carried, in order. */
  steps: z.array(StepResultSchema),
});
export type FlowResponseReport = z.infer<typeof FlowResponseReportSchema>;

/** How the app answers a callback it refuses (the body of its 4xx/5xx). */
export const CallbackErrorBodySchema = z.object({
  error: z.object({ code: ErrorCodeSchema, message: z.string() }),
});
export type CallbackErrorBody = z.infer<typeof CallbackErrorBodySchema>;
