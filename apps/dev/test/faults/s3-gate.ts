// An HTTP proxy in front of an S3 endpoint that the test opens and closes for run log uploads
// (presigned POST forms: a multipart POST to the bucket). Everything else passes at once, the
// Host header untouched, so signatures made for the gate's address hold.
import { EventEmitter, once } from 'node:events';
import { createServer, request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

export type GateMode = 'pass' | 'hold' | 'fail';

export interface S3Gate {
  /** The endpoint to give the stack in place of the S3 server's. */
  readonly url: string;
  /**
   * `hold`: uploads wait until the mode changes; `fail`: uploads (held ones included) are
   * answered 503 without reaching S3; `pass`: they go through (held ones included).
   */
  set(mode: GateMode): void;
  /** Resolves once `count` uploads have arrived at the gate since it started. */
  arrived(count: number): Promise<void>;
  /** Resolves once `count` uploads have been answered by S3 with a 2xx. */
  stored(count: number): Promise<void>;
  /** Uploads waiting at the gate now (a held one whose client went away is no longer counted). */
  readonly holding: number;
  close(): Promise<void>;
}

interface Held {
  request: IncomingMessage;
  body: Buffer;
  response: ServerResponse;
}

export async function startS3Gate(target: string): Promise<S3Gate> {
  const upstream = new URL(target);
  const events = new EventEmitter();
  let mode: GateMode = 'pass';
  let arrivedCount = 0;
  let storedCount = 0;
  const held = new Set<Held>();

  const forward = ({ request, body, response }: Held, isUpload: boolean) => {
    const outgoing = httpRequest(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: request.method,
        path: request.url,
        headers: request.headers,
      },
      (answer) => {
        response.writeHead(answer.statusCode ?? 502, answer.headers);
        answer.pipe(response);
        answer.on('end', () => {
          const status = answer.statusCode ?? 0;
          if (isUpload && status >= 200 && status < 300) {
            storedCount += 1;
            events.emit('stored');
          }
        });
      },
    );
    outgoing.on('error', () => response.destroy());
    outgoing.end(body);
  };
  const refuse = ({ response }: Held) => {
    response.writeHead(503, { 'content-type': 'application/xml' });
    response.end('<Error><Code>SlowDown</Code><Message>refused by the test gate</Message></Error>');
  };

  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const entry = { request, body: Buffer.concat(chunks), response };
      const isUpload =
        request.method === 'POST' &&
        String(request.headers['content-type'] ?? '').startsWith('multipart/form-data');
      if (!isUpload) return forward(entry, false);
      arrivedCount += 1;
      events.emit('arrived');
      if (mode === 'pass') return forward(entry, true);
      if (mode === 'fail') return refuse(entry);
      held.add(entry);
      // A client that went away (its engine was killed) takes its upload with it.
      response.on('close', () => held.delete(entry));
    });
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;

  const reached = (event: string, count: () => number, wanted: number) =>
    new Promise<void>((resolve) => {
      const check = () => {
        if (count() < wanted) return;
        events.off(event, check);
        resolve();
      };
      events.on(event, check);
      check();
    });

  return {
    url: `http://127.0.0.1:${port}`,
    set(next) {
      mode = next;
      if (next === 'hold') return;
      const waiting = [...held];
      held.clear();
      for (const entry of waiting) {
        if (next === 'pass') forward(entry, true);
        else refuse(entry);
      }
    },
    arrived: (count) => reached('arrived', () => arrivedCount, count),
    stored: (count) => reached('stored', () => storedCount, count),
    get holding() {
      return held.size;
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
