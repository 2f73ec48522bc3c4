import { randomBytes } from 'node:crypto';
import {
  formatTraceparent,
  MAX_ENGINE_SPANS,
  parseTraceparent,
  type SpanRecord,
  type TraceContext,
} from '@flowbox/protocol';

/**
 * The spans of one traced run as plain records: the engine loads no OpenTelemetry SDK and may
 * have no way to a collector (sandboxed). The worker exports them (`execute-result.spans`).
 *
 *   engine.run            the whole execution, from the job to the outcome
 *   ├── step <name>       each step, the trigger included
 *   └── log.upload        the run log's upload, after the outcome (sent with `log-persisted`)
 *
 * Leaves that run at once (a loop's iterations) each have a child open; a callback carries the
 * latest one opened and still open as its `traceparent()`.
 */
export interface RunTrace {
  /** Opens a child of `engine.run`. */
  start(name: string, attributes?: SpanRecord['attributes']): RecordedSpan;
  /** The open child, or `engine.run`, as a traceparent: the header of a callback sent now. */
  traceparent(): string;
  /** Ends `engine.run` (and a child left open) and returns every record. */
  finish(error?: SpanError): SpanRecord[];
}

export interface RecordedSpan {
  end(error?: SpanError, attributes?: SpanRecord['attributes']): void;
}

type SpanError = { code: string; message: string };

/** Null for a traceparent that is invalid or says not sampled: nothing is recorded. */
export function startRunTrace(
  traceparent: string,
  attributes: SpanRecord['attributes'],
  clock: () => number = epochMs,
  newSpanId: () => string = randomSpanId,
): RunTrace | null {
  const parent = parseTraceparent(traceparent);
  if (parent === null || !parent.sampled) return null;
  const records: SpanRecord[] = [];
  const root = open('engine.run', parent.spanId, attributes);
  /** Children open now, in the order they opened. */
  const openChildren: { spanId: string; span: RecordedSpan }[] = [];

  function open(name: string, parentSpanId: string, attrs: SpanRecord['attributes']) {
    const spanId = newSpanId();
    const startMs = clock();
    let ended = false;
    const span: RecordedSpan = {
      end(error, more) {
        if (ended) return;
        ended = true;
        const at = openChildren.findIndex((child) => child.span === span);
        if (at !== -1) openChildren.splice(at, 1);
        // Past the cap the run still runs; its trace misses the later steps (never engine.run,
        // which the others hang from).
        if (parentSpanId !== parent?.spanId && records.length >= MAX_ENGINE_SPANS - 1) return;
        const record: SpanRecord = {
          name: name.slice(0, MAX_NAME),
          spanId,
          parentSpanId,
          startMs,
          endMs: clock(),
          attributes: withinLimits(more === undefined ? attrs : { ...attrs, ...more }),
          status: error === undefined ? 'ok' : 'error',
        };
        if (error !== undefined) {
          record.attributes['flowbox.error.code'] = error.code.slice(0, MAX_VALUE);
          record.statusMessage = error.message.slice(0, MAX_VALUE);
        }
        records.push(record);
      },
    };
    return { spanId, span };
  }

  const context = (spanId: string): TraceContext => ({ traceId: parent.traceId, spanId, sampled: true });
  return {
    start(name, attrs = {}) {
      const child = open(name, root.spanId, attrs);
      openChildren.push(child);
      return child.span;
    },
    traceparent() {
      return formatTraceparent(context((openChildren.at(-1) ?? root).spanId));
    },
    finish(error) {
      for (const child of [...openChildren]) child.span.end();
      root.span.end(error);
      return records;
    },
  };
}

/**
 * SpanRecordSchema's limits. A record past them would fail the worker's parse of the whole
 * execute-result, costing the run, not just its trace: values from the flow (a piece's action
 * name) are cut to fit here.
 */
const MAX_NAME = 256;
const MAX_VALUE = 1024;

function withinLimits(attributes: SpanRecord['attributes']): SpanRecord['attributes'] {
  const out: SpanRecord['attributes'] = {};
  for (const [key, value] of Object.entries(attributes)) {
    out[key.slice(0, 128)] = typeof value === 'string' ? value.slice(0, MAX_VALUE) : value;
  }
  return out;
}

function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

function randomSpanId(): string {
  return randomBytes(8).toString('hex');
}
