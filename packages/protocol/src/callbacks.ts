import { z } from 'zod';
import { type ErrorCode, ErrorCodeSchema } from './errors.ts';
import { FlowResponseSchema, StepResultSchema } from './run.ts';
import { TraceparentSchema } from './trace.ts';

/**
 * engine ─IPC─▶ worker ─socket.io─▶ app (EngineCallback, below), or engine ─HTTP─▶ app (the
 * routes here, for other clients and engines run outside a worker). Every request carries `authorization: Bearer <engineToken>`, a JWT
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
  subflows: (runId: string) => `/v1/engine/runs/${encodeURIComponent(runId)}/subflows`,
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
  /**
   * The response step is the flow's last: no step follows, only the log upload and the result.
   * Its worker may then ask for its next job (socket-events.ts, `running`).
   */
  last: z.boolean().optional(),
});
export type FlowResponseReport = z.infer<typeof FlowResponseReportSchema>;

/** How the app answers a callback it refuses (the body of its 4xx/5xx). */
export const CallbackErrorBodySchema = z.object({
  error: z.object({ code: ErrorCodeSchema, message: z.string() }),
});
export type CallbackErrorBody = z.infer<typeof CallbackErrorBodySchema>;

/**
 * A `flow` step starts its child run: the app creates it (once per run and path: the same child
 * is named again to an engine that resumed or retried) and answers `subflow-started` with its id.
 * SUBFLOW_MAX_DEPTH bounds a chain of children (SUBFLOW_TOO_DEEP).
 */
export const SubflowStartSchema = z.object({
  version: z.literal(1),
  type: z.literal('subflow-start'),
  path: z.string().min(1),
  flowId: z.string().min(1),
  /** The child's trigger body. */
  input: z.record(z.string(), z.unknown()),
  wait: z.boolean(),
});
export type SubflowStart = z.infer<typeof SubflowStartSchema>;

export const EngineReportSchema = z.discriminatedUnion('type', [
  StepReportSchema,
  FlowResponseReportSchema,
  SubflowStartSchema,
]);
export type EngineReport = z.infer<typeof EngineReportSchema>;

/**
 * One callback as it travels over IPC to the worker and on over the worker's socket to the app:
 * what the HTTP request carries (the run in the path, the token and traceparent in headers, the
 * report as body) in one object that the worker forwards untouched. The app checks it exactly as
 * it checks the HTTP request.
 */
export const EngineCallbackSchema = z.object({
  runId: z.string().min(1),
  engineToken: z.string().min(1),
  /** The engine span the report was sent from, when the run is traced. */
  traceparent: TraceparentSchema.optional(),
  report: EngineReportSchema,
});
export type EngineCallback = z.infer<typeof EngineCallbackSchema>;

/** Room for the token, ids and framing around a report, within the app's frame limit. */
export const CALLBACK_ENVELOPE_BYTES = 64 * 1024;

/** How a callback sent over IPC and the socket is answered: the HTTP route's 204 or error body. */
export const CallbackAnswerSchema = z.discriminatedUnion('type', [
  z.object({ version: z.literal(1), type: z.literal('ok') }),
  z.object({ version: z.literal(1), type: z.literal('error'), error: CallbackErrorBodySchema.shape.error }),
  /** The answer to a `subflow-start`: the child run's id. */
  z.object({ version: z.literal(1), type: z.literal('subflow-started'), runId: z.string().min(1) }),
]);
export type CallbackAnswer = z.infer<typeof CallbackAnswerSchema>;

export const callbackRefusal = (code: ErrorCode, message: string): CallbackAnswer => ({
  version: 1,
  type: 'error',
  error: { code, message },
});
