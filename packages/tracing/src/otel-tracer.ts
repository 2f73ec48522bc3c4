import { formatTraceparent, parseTraceparent, type SpanRecord } from '@flowbox/protocol';
import {
  type Context,
  type HrTime,
  type Span as OtelSpan,
  ROOT_CONTEXT,
  type SpanContext,
  SpanKind,
  SpanStatusCode,
  TraceFlags,
  trace,
} from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { type Resource, resourceFromAttributes } from '@opentelemetry/resources';
import {
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type ReadableSpan,
  type SpanExporter,
  TracerProvider,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { epochMs } from './clock.ts';
import { recordedTree } from './recorded-tree.ts';
import type { Span, Tracer, TracingOptions } from './tracer.ts';

/**
 * The OpenTelemetry adapter: the only module that imports the SDK, loaded by `startTracing`
 * only when tracing is configured. Spans are batched (the SDK's BatchSpanProcessor: every 5 s or
 * 512 spans) and exported as OTLP/HTTP JSON to `<endpoint>/v1/traces`.
 */
export function createOtelTracer(options: TracingOptions): Tracer {
  const exporter = reportingFailures(
    new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` }),
    options.logger,
  );
  const processor = new BatchSpanProcessor({ exporter });
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...options.resource, [ATTR_SERVICE_NAME]: options.serviceName }),
    // Every run is traced, unless a webhook's caller sent a traceparent that says not sampled.
    sampler: new ParentBasedSampler({ root: new AlwaysOnSampler() }),
    spanProcessors: [processor],
  });
  const tracer = provider.getTracer('flowbox');
  // Records of other processes are exported as those services; one resource each, so a batch
  // groups their spans.
  const recordedResources = new Map<string, Resource>();

  return {
    startSpan(name, spanOptions = {}) {
      const span = tracer.startSpan(
        name,
        {
          kind: SPAN_KINDS[spanOptions.kind ?? 'internal'],
          ...(spanOptions.attributes === undefined ? {} : { attributes: spanOptions.attributes }),
          // Always given: the SDK's own start is Date.now(), whole milliseconds, which puts the
          // spans of one request up to a millisecond out of place against each other.
          startTime: spanOptions.startMs ?? epochMs(),
        },
        parentContext(spanOptions.parent),
      );
      return wrap(span);
    },

    exportRecorded(parent, records, serviceName) {
      const context = parseTraceparent(parent);
      if (context === null || !context.sampled) return records.length;
      const kept = recordedTree(context.spanId, records);
      let resource = recordedResources.get(serviceName);
      if (resource === undefined) {
        resource = resourceFromAttributes({ ...options.resource, [ATTR_SERVICE_NAME]: serviceName });
        recordedResources.set(serviceName, resource);
      }
      for (const record of kept) processor.onEnd(toReadableSpan(context.traceId, record, resource));
      return records.length - kept.length;
    },

    close: () => provider.shutdown(),
  };
}

const SPAN_KINDS = {
  server: SpanKind.SERVER,
  client: SpanKind.CLIENT,
  producer: SpanKind.PRODUCER,
  consumer: SpanKind.CONSUMER,
  internal: SpanKind.INTERNAL,
} as const;

function parentContext(traceparent: string | undefined): Context {
  const parent = traceparent === undefined ? null : parseTraceparent(traceparent);
  if (parent === null) return ROOT_CONTEXT;
  return trace.setSpanContext(ROOT_CONTEXT, {
    traceId: parent.traceId,
    spanId: parent.spanId,
    traceFlags: parent.sampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
    isRemote: true,
  });
}

function wrap(span: OtelSpan): Span {
  const context = span.spanContext();
  const sampled = (context.traceFlags & TraceFlags.SAMPLED) !== 0;
  return {
    traceparent: sampled
      ? formatTraceparent({ traceId: context.traceId, spanId: context.spanId, sampled })
      : undefined,
    setAttribute: (key, value) => {
      span.setAttribute(key, value);
    },
    fail: (error) => {
      if (error.code !== undefined) span.setAttribute('flowbox.error.code', error.code);
      span.setStatus({ code: SpanStatusCode.ERROR, message: error.message });
    },
    // Given too: after a given start, the SDK ends a span at Date.now().
    end: (endMs) => span.end(endMs ?? epochMs()),
  };
}

function toReadableSpan(traceId: string, record: SpanRecord, resource: Resource): ReadableSpan {
  const context: SpanContext = { traceId, spanId: record.spanId, traceFlags: TraceFlags.SAMPLED };
  return {
    name: record.name,
    kind: SpanKind.INTERNAL,
    spanContext: () => context,
    parentSpanContext: { traceId, spanId: record.parentSpanId, traceFlags: TraceFlags.SAMPLED },
    startTime: hrTime(record.startMs),
    endTime: hrTime(record.endMs),
    duration: hrTime(record.endMs - record.startMs),
    status:
      record.status === 'error'
        ? {
            code: SpanStatusCode.ERROR,
            ...(record.statusMessage === undefined ? {} : { message: record.statusMessage }),
          }
        : { code: SpanStatusCode.UNSET },
    attributes: record.attributes,
    links: [],
    events: [],
    ended: true,
    resource,
    instrumentationScope: { name: '@flowbox/engine' },
    droppedAttributesCount: 0,
    droppedEventsCount: 0,
    droppedLinksCount: 0,
  };
}

/** Milliseconds (epoch or a duration) as OpenTelemetry's [seconds, nanoseconds]. */
export function hrTime(ms: number): HrTime {
  const seconds = Math.floor(ms / 1000);
  const nanos = Math.round((ms - seconds * 1000) * 1e6);
  return nanos >= 1e9 ? [seconds + 1, nanos - 1e9] : [seconds, nanos];
}

/** A collector that is down costs the spans, never the run: say so in the log, at warn. */
function reportingFailures(exporter: SpanExporter, logger: TracingOptions['logger']): SpanExporter {
  return {
    export(spans, done) {
      exporter.export(spans, (result) => {
        // ExportResultCode.SUCCESS is 0 (@opentelemetry/core, not a dependency of its own here).
        if (result.code !== 0) {
          logger.warn(
            { spans: spans.length, error: result.error?.message },
            'could not export spans to the OTLP endpoint',
          );
        }
        done(result);
      });
    },
    shutdown: () => exporter.shutdown(),
    forceFlush: async () => exporter.forceFlush?.(),
  };
}
