import { EventEmitter } from 'node:events';
import { createServer, type IncomingMessage } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';

/** One span as an OTLP/HTTP JSON export carried it, flattened with its resource's service. */
export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Absent for a root span. */
  parentSpanId?: string;
  name: string;
  attributes: Record<string, unknown>;
  startNs: bigint;
  endNs: bigint;
  /** OTLP status code: 0 unset, 1 ok, 2 error. */
  statusCode: number;
}

export interface OtlpReceiver {
  /** The base URL, as OTEL_EXPORTER_OTLP_ENDPOINT takes it; exports arrive at `/v1/traces`. */
  readonly url: string;
  readonly spans: readonly ReceivedSpan[];
  /**
   * Resolves with what `find` returns for the spans received so far, as soon as it returns
   * something: checked at once and again on every export that arrives (no polling). Rejects
   * past `deadlineMs`, saying `what` it waited for.
   */
  waitFor<T>(
    find: (spans: readonly ReceivedSpan[]) => T | undefined,
    deadlineMs: number,
    what: string,
  ): Promise<T>;
  close(): Promise<void>;
}

/**
 * A tiny OTLP/HTTP trace receiver on 127.0.0.1 for tests and the benchmark's hop table: it decodes the JSON encoding
 * (`content-type: application/json`, what @opentelemetry/exporter-trace-otlp-http sends) and
 * answers 200 `{}`; anything else gets 415.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const arrivals = new EventEmitter();
  const server = createServer((request, response) => {
    void readBody(request).then((body) => {
      if (request.method !== 'POST' || request.url !== '/v1/traces') {
        response.writeHead(404).end();
        return;
      }
      if (!String(request.headers['content-type']).startsWith('application/json')) {
        response.writeHead(415).end();
        return;
      }
      const text = (request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString(
        'utf8',
      );
      spans.push(...decodeExport(JSON.parse(text) as ExportRequest));
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      arrivals.emit('spans');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    spans,
    waitFor(find, deadlineMs, what) {
      return new Promise((resolve, reject) => {
        const check = () => {
          const found = find(spans);
          if (found === undefined) return;
          settle();
          resolve(found);
        };
        const timer = setTimeout(() => {
          settle();
          reject(new Error(`${what}: not within ${deadlineMs} ms (${spans.length} spans received)`));
        }, deadlineMs);
        const settle = () => {
          clearTimeout(timer);
          arrivals.off('spans', check);
        };
        arrivals.on('spans', check);
        check();
      });
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** The slice of OTLP's ExportTraceServiceRequest (JSON encoding) this receiver reads. */
interface ExportRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: Array<{
      spans?: Array<{
        traceId: string;
        spanId: string;
        parentSpanId?: string;
        name: string;
        startTimeUnixNano: string | number;
        endTimeUnixNano: string | number;
        attributes?: KeyValue[];
        status?: { code?: number };
      }>;
    }>;
  }>;
}

interface KeyValue {
  key: string;
  value: { stringValue?: string; intValue?: string | number; doubleValue?: number; boolValue?: boolean };
}

function decodeExport(request: ExportRequest): ReceivedSpan[] {
  return (request.resourceSpans ?? []).flatMap((resourceSpans) => {
    const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
    return (resourceSpans.scopeSpans ?? []).flatMap((scope) =>
      (scope.spans ?? []).map((span) => {
        const received: ReceivedSpan = {
          service,
          traceId: span.traceId,
          spanId: span.spanId,
          name: span.name,
          attributes: attributesOf(span.attributes),
          startNs: BigInt(span.startTimeUnixNano),
          endNs: BigInt(span.endTimeUnixNano),
          statusCode: span.status?.code ?? 0,
        };
        // The JSON encoding may write a root's parent as an empty string.
        if (span.parentSpanId !== undefined && span.parentSpanId !== '')
          received.parentSpanId = span.parentSpanId;
        return received;
      }),
    );
  });
}

function attributesOf(list: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const { key, value } of list ?? []) {
    out[key] =
      value.stringValue ??
      (value.intValue === undefined ? undefined : Number(value.intValue)) ??
      value.doubleValue ??
      value.boolValue;
  }
  return out;
}

async function readBody(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}
