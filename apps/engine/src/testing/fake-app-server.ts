import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP server that stands in for the app's engine callbacks and for the S3
 * presigned PUT in tests. It records every request; a responder decides the status and
 * may hold a request open (return a promise) to freeze the engine mid-run.
 */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/engine/runs/run-1/steps`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON, or undefined when it is not JSON. */
  json: unknown;
}

export type Responder = (request: RecordedRequest) => number | Promise<number>;

export interface FakeAppServer {
  /** Base URL, e.g. http://127.0.0.1:43210 */
  readonly url: string;
  /** A "presigned" PUT URL for a log key, served by this server. */
  logUploadUrl(key: string): string;
  readonly requests: readonly RecordedRequest[];
  /** The first request, already received or still to come, that matches. */
  waitForRequest(predicate: (request: RecordedRequest) => boolean): Promise<RecordedRequest>;
  setResponder(responder: Responder): void;
  close(): Promise<void>;
}

const defaultResponder: Responder = (request) => (request.method === 'PUT' ? 200 : 204);

export async function startFakeAppServer(): Promise<FakeAppServer> {
  const requests: RecordedRequest[] = [];
  const waiters: {
    predicate: (request: RecordedRequest) => boolean;
    resolve: (r: RecordedRequest) => void;
  }[] = [];
  let responder = defaultResponder;

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json: parseJson(body),
      };
      requests.push(recorded);
      for (const waiter of waiters.filter((w) => w.predicate(recorded))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(recorded);
      }
      Promise.resolve(responder(recorded)).then(
        (status) => {
          res.statusCode = status;
          res.end(status >= 400 ? JSON.stringify({ error: { message: 'fake failure' } }) : undefined);
        },
        () => res.destroy(),
      );
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  const url = `http://127.0.0.1:${port}`;

  return {
    url,
    logUploadUrl: (key) => `${url}/s3/flowbox-logs/${key}?X-Amz-Signature=fake`,
    requests,
    waitForRequest(predicate) {
      const seen = requests.find(predicate);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise((resolve) => waiters.push({ predicate, resolve }));
    },
    setResponder(next) {
      responder = next;
    },
    async close() {
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
