/**
 * flowbox tracing (docs/operations.md, Tracing): one OpenTelemetry trace per run, exported as
 * OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set. Importing this module loads no
 * OpenTelemetry SDK code; `startTracing` does, and only a process configured for it calls it.
 */
import { serializeError } from '@flowbox/protocol';
import type { Span, Tracer, TracingOptions } from './tracer.ts';

export { epochMs } from './clock.ts';
export { recordedTree } from './recorded-tree.ts';
export type { Span, SpanAttributes, SpanOptions, Tracer, TracingOptions } from './tracer.ts';

/** Loads the OpenTelemetry SDK and starts exporting; `close()` the tracer to flush at shutdown. */
export async function startTracing(options: TracingOptions): Promise<Tracer> {
  const { createOtelTracer } = await import('./otel-tracer.ts');
  return createOtelTracer(options);
}

/** The service name each process reports when OTEL_SERVICE_NAME is unset, and the engine's. */
export const DEFAULT_SERVICE_NAMES = {
  app: 'flowbox-app',
  worker: 'flowbox-worker',
  engine: 'flowbox-engine',
} as const;

/** Runs `work` in `span`: a failure marks the span failed (and is rethrown); the span ends either way. */
export async function traced<T>(span: Span, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    span.fail(serializeError(error));
    throw error;
  } finally {
    span.end();
  }
}
