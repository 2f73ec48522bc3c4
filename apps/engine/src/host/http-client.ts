import type { Agent as HttpAgent } from 'node:http';
import type { Agent as HttpsAgent } from 'node:https';

export interface HttpRequest {
  method: 'POST' | 'GET';
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
  /** Read the whole response body, up to this many bytes (more rejects): a checkpoint's download. */
  maxBodyBytes?: number;
}

export interface HttpResponse {
  status: number;
  /** The start of the response body, for error messages. */
  bodyExcerpt: string;
  /** The whole body, when the request set `maxBodyBytes`. */
  body?: string;
}

/** Outgoing HTTP with keep-alive: the engine calls the same app for every step of every run. */
export interface HttpClient {
  /** Resolves with any status; rejects on network errors and timeouts. */
  request(request: HttpRequest): Promise<HttpResponse>;
  /** Loads node:http now rather than on the first request (the engine does it after `ready`). */
  warmUp(): Promise<void>;
  close(): void;
}

const EXCERPT_BYTES = 2_048;

type Transport = {
  request: typeof import('node:http').request;
  agent: HttpAgent | HttpsAgent;
};

/**
 * node:http loads on first use (or `warmUp`) through `process.getBuiltinModule`: an `import`
 * builds an ES module wrapper whose lazy exports pull in undici (about 90 ms against 7 ms).
 * node:https loads only for an https URL. With `socketPath` (SANDBOXED) every request goes
 * over that Unix socket to the worker's relay.
 */
export function createHttpClient(options: { socketPath?: string | undefined } = {}): HttpClient {
  let plain: Transport | undefined;
  let secure: Transport | undefined;
  const transport = (protocol: string): Transport => {
    if (protocol === 'https:') {
      const https = process.getBuiltinModule('node:https');
      secure ??= { request: https.request, agent: new https.Agent({ keepAlive: true }) };
      return secure;
    }
    const http = process.getBuiltinModule('node:http');
    plain ??= { request: http.request, agent: new http.Agent({ keepAlive: true }) };
    return plain;
  };
  return {
    async request(request) {
      const url = new URL(request.url);
      const { request: send, agent } = transport(url.protocol);
      const body = Buffer.from(request.body, 'utf8');
      return new Promise((resolve, reject) => {
        const req = send(url, {
          method: request.method,
          agent,
          // In a sandbox every request goes to the worker's relay, whatever the URL's host.
          ...(options.socketPath === undefined ? {} : { socketPath: options.socketPath }),
          headers: { ...request.headers, 'content-length': String(body.byteLength) },
          timeout: request.timeoutMs,
        });
        req.on('timeout', () => req.destroy(new Error(`no response within ${request.timeoutMs} ms`)));
        req.on('error', reject);
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          const keep = request.maxBodyBytes ?? EXCERPT_BYTES;
          let kept = 0;
          res.on('data', (chunk: Buffer) => {
            // Drain everything so the socket can be reused, but keep only an excerpt.
            if (kept < keep) {
              chunks.push(chunk);
              kept += chunk.byteLength;
            } else if (request.maxBodyBytes !== undefined) {
              req.destroy(new Error(`the response is over ${request.maxBodyBytes} bytes`));
            }
          });
          res.on('error', reject);
          res.on('end', () => {
            const whole = Buffer.concat(chunks);
            const bodyExcerpt = whole.subarray(0, EXCERPT_BYTES).toString('utf8');
            if (request.maxBodyBytes === undefined) resolve({ status: res.statusCode ?? 0, bodyExcerpt });
            else if (whole.byteLength > request.maxBodyBytes) {
              reject(new Error(`the response is over ${request.maxBodyBytes} bytes`));
            } else resolve({ status: res.statusCode ?? 0, bodyExcerpt, body: whole.toString('utf8') });
          });
        });
        req.end(body);
      });
    },
    async warmUp() {
      transport('http:');
    },
    close() {
      plain?.agent.destroy();
      secure?.agent.destroy();
    },
  };
}
