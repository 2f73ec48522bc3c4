import http from 'node:http';
import https from 'node:https';

export interface HttpRequest {
  method: 'POST' | 'PUT';
  url: string;
  headers: Record<string, string>;
  body: string;
  timeoutMs: number;
}

export interface HttpResponse {
  status: number;
  /** The start of the response body, for error messages. */
  bodyExcerpt: string;
}

/** Outgoing HTTP with keep-alive: the engine calls the same app for every step of every run. */
export interface HttpClient {
  /** Resolves with any status; rejects on network errors and timeouts. */
  request(request: HttpRequest): Promise<HttpResponse>;
  close(): void;
}

const EXCERPT_BYTES = 2_048;

export function createHttpClient(): HttpClient {
  const agents = {
    http: new http.Agent({ keepAlive: true }),
    https: new https.Agent({ keepAlive: true }),
  };
  return {
    request(request) {
      const url = new URL(request.url);
      const secure = url.protocol === 'https:';
      const send = secure ? https.request : http.request;
      const body = Buffer.from(request.body, 'utf8');
      return new Promise((resolve, reject) => {
        const req = send(url, {
          method: request.method,
          agent: secure ? agents.https : agents.http,
          headers: { ...request.headers, 'content-length': String(body.byteLength) },
          timeout: request.timeoutMs,
        });
        req.on('timeout', () => req.destroy(new Error(`no response within ${request.timeoutMs} ms`)));
        req.on('error', reject);
        req.on('response', (res) => {
          const chunks: Buffer[] = [];
          let kept = 0;
          res.on('data', (chunk: Buffer) => {
            // Drain everything so the socket can be reused, but keep only an excerpt.
            if (kept < EXCERPT_BYTES) {
              chunks.push(chunk);
              kept += chunk.byteLength;
            }
          });
          res.on('error', reject);
          res.on('end', () => {
            const bodyExcerpt = Buffer.concat(chunks).subarray(0, EXCERPT_BYTES).toString('utf8');
            resolve({ status: res.statusCode ?? 0, bodyExcerpt });
          });
        });
        req.end(body);
      });
    },
    close() {
      agents.http.destroy();
      agents.https.destroy();
    },
  };
}
