import { once } from 'node:events';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A loopback HTTP server that stands in for the app's engine callbacks and for the S3
 * presigned POST upload in tests (any request under `/s3/`). It records every request; a
 * responder decides the status and may hold a request open (return a promise) to freeze the
 * engine mid-run.
 */
export interface RecordedRequest {
  method: string;
  /** Path and query, e.g. `/v1/engine/runs/run-1/steps`. */
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The body parsed as JSON (for an upload, its `file` part), or undefined when it is not JSON. */
  json: unknown;
  /** For a multipart upload: its form fields, `file` included. */
  form?: Record<string, string>;
}

/** A request to the stand-in S3 (a log upload). */
export const isUpload = (request: RecordedRequest): boolean => request.url.startsWith('/s3/');

/** A status (an error status gets a fake error body), or a status with the body to answer. */
export type Answer = number | { status: number; body: string };
export type Responder = (request: RecordedRequest) => Answer | Promise<Answer>;

export interface FakeAppServer {
  /** Base URL, e.g. http://127.0.0.1:43210 */
  readonly url: string;
  /** A "presigned" upload URL for a log key, served by this server. */
  logUploadUrl(key: string): string;
  readonly requests: readonly RecordedRequest[];
  /** The first request, already received or still to come, that matches. */
  waitForRequest(predicate: (request: RecordedRequest) => boolean): Promise<RecordedRequest>;
  setResponder(responder: Responder): void;
  close(): Promise<void>;
}

const defaultResponder: Responder = () => 204;

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
      const form = parseMultipart(req.headers['content-type'], body);
      const recorded: RecordedRequest = {
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body,
        json: parseJson(form?.file ?? body),
      };
      if (form !== undefined) recorded.form = form;
      requests.push(recorded);
      for (const waiter of waiters.filter((w) => w.predicate(recorded))) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(recorded);
      }
      Promise.resolve(responder(recorded)).then(
        (answer) => {
          if (typeof answer !== 'number') {
            res.statusCode = answer.status;
            res.setHeader('content-type', 'application/json');
            res.end(answer.body);
            return;
          }
          res.statusCode = answer;
          res.end(answer >= 400 ? JSON.stringify({ error: { message: 'fake failure' } }) : undefined);
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

/** The fields of a multipart/form-data body, enough for what the engine's uploader sends. */
function parseMultipart(contentType: string | undefined, body: string): Record<string, string> | undefined {
  const boundary = /^multipart\/form-data; boundary=(.+)$/.exec(contentType ?? '')?.[1];
  if (boundary === undefined) return undefined;
  const form: Record<string, string> = {};
  for (const part of body.split(`--${boundary}`).slice(1, -1)) {
    const [head = '', ...rest] = part.replace(/^\r\n/, '').split('\r\n\r\n');
    const name = /name="([^"]+)"/.exec(head)?.[1];
    if (name !== undefined) form[name] = rest.join('\r\n\r\n').replace(/\r\n$/, '');
  }
  return form;
}

function parseJson(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return undefined;
  }
}
