import { z } from 'zod';
import { SerializedErrorSchema } from './errors.ts';
import { FinalRunStatusSchema, FlowResponseSchema, StepResultSchema } from './run.ts';

/**
 * engine ─HTTP─▶ app. Every request carries `authorization: Bearer <engineToken>`, a JWT
 * whose subject is the run id in the path.
 *
 *   POST /v1/engine/runs/:runId/steps      StepReport       after each step (progress)
 *   POST /v1/engine/runs/:runId/response   FlowResponseReport   the response step
 *   POST /v1/engine/runs/:runId/finish     RunFinishedReport   once, after the log upload
 *
 * None of them writes to Postgres: progress and the finish report are kept in the app's memory
 * (for `GET /v1/runs/:id` while the run is in flight, and for the record of a run whose engine or
 * worker dies), the response goes to the waiting caller. The run's record is written once, from
 * the worker's job result, which carries the same steps.
 *
 * Each answers 204, or an error body `{ error: SerializedError }`.
 */
export const ENGINE_CALLBACK_PATHS = {
  steps: (runId: string) => `/v1/engine/runs/${encodeURIComponent(runId)}/steps`,
  response: (runId: string) => `/v1/engine/runs/${encodeURIComponent(runId)}/response`,
  finish: (runId: string) => `/v1/engine/runs/${encodeURIComponent(runId)}/finish`,
} as const;

export const StepReportSchema = z.object({
  version: z.literal(1),
  type: z.literal('step'),
  step: StepResultSchema,
});
export type StepReport = z.infer<typeof StepReportSchema>;

export const FlowResponseReportSchema = z.object({
  version: z.literal(1),
  type: z.literal('flow-response'),
  response: FlowResponseSchema,
});
export type FlowResponseReport = z.infer<typeof FlowResponseReportSchema>;

export const RunFinishedReportSchema = z.object({
  version: z.literal(1),
  type: z.literal('run-finished'),
  status: FinalRunStatusSchema,
  error: SerializedErrorSchema.optional(),
  /** Where the run log was stored; null when its upload failed (the failure is in `logError`). */
  logKey: z.string().nullable(),
  logError: SerializedErrorSchema.optional(),
});
export type RunFinishedReport = z.infer<typeof RunFinishedReportSchema>;
