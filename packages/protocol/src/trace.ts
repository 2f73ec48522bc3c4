import { z } from 'zod';

/**
 * Trace context across processes (docs/operations.md, Tracing). A traced run carries a W3C
 * `traceparent` (https://www.w3.org/TR/trace-context/#traceparent-header) on every hop: the
 * BullMQ job data, the dispatched job (socket.io), the engine job (IPC), the `traceparent` header
 * of the engine's callbacks, and the worker's job result. An untraced run carries none: the field
 * is absent, not empty. The engine loads no OpenTelemetry SDK: it sends the spans it recorded
 * (`SpanRecord`) to its worker with its result, and the worker exports them.
 */

/** The header (and field) name; lower case, as Node presents incoming headers. */
export const TRACEPARENT_HEADER = 'traceparent';

/** `00-<trace id: 32 hex>-<parent span id: 16 hex>-<flags: 2 hex>`, lower case. */
const TRACEPARENT = /^([0-9a-f]{2})-([0-9a-f]{32})-([0-9a-f]{16})-([0-9a-f]{2})(-.*)?$/;
const ZERO_TRACE_ID = '0'.repeat(32);
const ZERO_SPAN_ID = '0'.repeat(16);

export const TraceparentSchema = z
  .string()
  .max(512)
  .refine((text) => parseTraceparent(text) !== null, 'must be a W3C traceparent');

export interface TraceContext {
  traceId: string;
  /** The span the next one is a child of. */
  spanId: string;
  sampled: boolean;
}

/**
 * Reads a traceparent as the W3C rules say: version ff and all-zero ids are invalid; a version
 * above 00 may carry more fields after the four known ones, which are ignored. Null when invalid.
 */
export function parseTraceparent(text: string): TraceContext | null {
  const match = TRACEPARENT.exec(text);
  if (match === null) return null;
  const [, version, traceId, spanId, flags, rest] = match as unknown as [
    string,
    string,
    string,
    string,
    string,
    string | undefined,
  ];
  if (version === 'ff' || (version === '00' && rest !== undefined)) return null;
  if (traceId === ZERO_TRACE_ID || spanId === ZERO_SPAN_ID) return null;
  return { traceId, spanId, sampled: (Number.parseInt(flags, 16) & 1) === 1 };
}

export function formatTraceparent(context: TraceContext): string {
  return `00-${context.traceId}-${context.spanId}-${context.sampled ? '01' : '00'}`;
}

const SpanIdSchema = z.string().regex(/^[0-9a-f]{16}$/, 'must be 16 lower-case hex digits');

/**
 * A span the engine recorded, for its worker to export in the trace of the job's traceparent.
 * Times are epoch milliseconds with a fraction (`performance.timeOrigin + performance.now()`).
 */
export const SpanRecordSchema = z.object({
  name: z.string().min(1).max(256),
  spanId: SpanIdSchema,
  /** The job's span (the traceparent the engine received) or another record's span. */
  parentSpanId: SpanIdSchema,
  startMs: z.number().nonnegative(),
  endMs: z.number().nonnegative(),
  attributes: z.record(z.string().max(128), z.union([z.string().max(1024), z.number(), z.boolean()])),
  /** `error` with a message when the span's work failed. */
  status: z.enum(['ok', 'error']),
  statusMessage: z.string().max(1024).optional(),
});
export type SpanRecord = z.infer<typeof SpanRecordSchema>;

/** Most spans one run's engine may send: a span per step, the run and its log upload. */
export const MAX_ENGINE_SPANS = 1_000;
