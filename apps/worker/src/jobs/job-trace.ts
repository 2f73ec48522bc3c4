import type { Logger } from '@flowbox/node-kit';
import {
  type DispatchedJob,
  formatTraceparent,
  parseTraceparent,
  type RunOutcome,
  type SpanRecord,
} from '@flowbox/protocol';
import { DEFAULT_SERVICE_NAMES, type Span, type SpanAttributes, type Tracer } from '@flowbox/tracing';

/**
 * The worker's part of a traced run's trace:
 *
 *   job                   received → result ready (the app's dispatch span is its parent)
 *   ├── provision         bundle, pieces and engine bundle into the cache
 *   ├── engine.boot       only when the job waited for an engine to boot
 *   └── engine.run …      the engine's records, exported here as service `flowbox-engine`
 *
 * The job span goes to the engine as its parent (`EngineJob.traceparent`) and back to the app
 * with the result, as the parent of its final write.
 */
export interface JobTrace {
  /** The job span as a traceparent. */
  readonly traceparent: string;
  /** Opens a child of the job span. */
  child(name: string, options?: { attributes?: SpanAttributes; startMs?: number }): Span;
  /**
   * Exports what the engine recorded, under the job span, or under one of the engine's spans
   * exported before (`underSpanId`: the log upload's span, which comes after the result).
   */
  engineSpans(records: readonly SpanRecord[] | undefined, underSpanId?: string): void;
  /** Ends the job span with the run's outcome. */
  end(outcome: Pick<RunOutcome, 'status' | 'error'>): void;
}

/** Null when tracing is off or the job is not traced: then the job costs nothing more. */
export function startJobTrace(
  tracer: Tracer | null,
  job: DispatchedJob,
  workerId: string,
  logger: Logger,
): JobTrace | null {
  if (tracer === null || job.traceparent === undefined) return null;
  const span = tracer.startSpan('job', {
    parent: job.traceparent,
    kind: 'consumer',
    attributes: { 'flowbox.run_id': job.runId, 'flowbox.flow_id': job.flowId, 'flowbox.worker_id': workerId },
  });
  const { traceparent } = span;
  // The app only sends sampled contexts; an unsampled one would leave nothing to record.
  if (traceparent === undefined) {
    span.end();
    return null;
  }
  return {
    traceparent,
    child: (name, options = {}) => tracer.startSpan(name, { ...options, parent: traceparent }),
    engineSpans(records, underSpanId) {
      if (records === undefined || records.length === 0) return;
      const context = parseTraceparent(traceparent);
      const parent =
        underSpanId === undefined || context === null
          ? traceparent
          : formatTraceparent({ ...context, spanId: underSpanId });
      const dropped = tracer.exportRecorded(parent, records, DEFAULT_SERVICE_NAMES.engine);
      if (dropped > 0) {
        logger.warn({ runId: job.runId, dropped }, 'dropped engine spans outside the job span');
      }
    },
    end(outcome) {
      span.setAttribute('flowbox.run.status', outcome.status);
      if (outcome.error !== undefined) span.fail(outcome.error);
      span.end();
    },
  };
}
