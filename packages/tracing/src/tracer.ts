import type { SpanRecord } from '@flowbox/protocol';

/**
 * The tracing port the app and the worker use. `startTracing` (index.ts) loads the OpenTelemetry
 * adapter only when OTEL_EXPORTER_OTLP_ENDPOINT is set; without it a process holds no tracer at
 * all (`null`), and every traced place is one null check, with no span object made.
 *
 * Parents travel between processes as W3C traceparent strings (`@flowbox/protocol` trace.ts), so
 * no context manager (async hooks) is needed: each span is given its parent explicitly.
 */
export interface Tracer {
  startSpan(name: string, options?: SpanOptions): Span;
  /**
   * Exports spans another process recorded (the engine's), in the trace of `parent` (the
   * traceparent that process was given), as the service `serviceName`. Only records whose chain
   * of parents reaches `parent` are exported; returns how many were dropped.
   */
  exportRecorded(parent: string, records: readonly SpanRecord[], serviceName: string): number;
  /** Exports what is buffered, then stops; spans ended later are dropped. */
  close(): Promise<void>;
}

export type SpanAttributes = Record<string, string | number | boolean>;

export interface SpanOptions {
  /** A W3C traceparent; unset (or invalid): the span starts a new trace. */
  parent?: string | undefined;
  kind?: 'server' | 'client' | 'producer' | 'consumer' | 'internal';
  attributes?: SpanAttributes;
  /** Epoch milliseconds, for work that began before the span could be opened. */
  startMs?: number;
}

export interface Span {
  /**
   * This span as the parent of work elsewhere; undefined when it is not sampled (a caller's
   * traceparent said so), and then nothing downstream records either.
   */
  readonly traceparent: string | undefined;
  setAttribute(key: string, value: string | number | boolean): void;
  /** Marks the span failed with an error's code and message. */
  fail(error: { code?: string | undefined; message: string }): void;
  /** `endMs`: epoch milliseconds; now when unset. */
  end(endMs?: number): void;
}

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to `<endpoint>/v1/traces`. */
  endpoint: string;
  /** OTEL_SERVICE_NAME. */
  serviceName: string;
  /** More resource attributes (service.instance.id, ...). */
  resource?: SpanAttributes;
  /** Where failed exports are reported. */
  logger: { warn(data: object, msg: string): void };
}
