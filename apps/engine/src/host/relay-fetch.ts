import { CODE_STEP_FETCH_LIMITS, type EgressFetch } from '@flowbox/egress';
import {
  FlowboxError,
  parseMessage,
  RELAY_ORIGIN,
  RELAY_PATHS,
  RelayFetchAnswerSchema,
} from '@flowbox/protocol';

/** The relay's answer carries the response body as JSON text: room for escapes on top of the cap. */
const MAX_ANSWER_BYTES = 2 * CODE_STEP_FETCH_LIMITS.maxResponseBytes + 64 * 1024;

/**
 * Code steps' `fetch` in a sandboxed engine: the request goes to the worker's relay over its Unix
 * socket, and the worker makes it under its egress policy (the sandbox has no network). The
 * step's signal aborts the exchange.
 */
export function createRelayEgressFetch(socketPath: string): EgressFetch {
  return (request, signal) => {
    const http = process.getBuiltinModule('node:http');
    const body = Buffer.from(JSON.stringify(request));
    return new Promise((resolve, reject) => {
      const req = http.request(`${RELAY_ORIGIN}${RELAY_PATHS.fetch}`, {
        method: 'POST',
        socketPath,
        signal,
        headers: { 'content-type': 'application/json', 'content-length': String(body.byteLength) },
      });
      req.on('error', (error) =>
        reject(
          signal.aborted
            ? signal.reason
            : new FlowboxError('CODE_STEP_FETCH_FAILED', `fetch failed: ${error.message}`),
        ),
      );
      req.on('response', (res) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.byteLength;
          if (size > MAX_ANSWER_BYTES) req.destroy(new Error('the relay answer is too large'));
          else chunks.push(chunk);
        });
        res.on('end', () => {
          const parsed = parseMessage(
            RelayFetchAnswerSchema,
            safeJson(Buffer.concat(chunks).toString('utf8')),
          );
          if (!parsed.ok) {
            reject(
              new FlowboxError(
                'CODE_STEP_FETCH_FAILED',
                `fetch failed: the relay answered ${res.statusCode}`,
              ),
            );
          } else if ('error' in parsed.value) {
            const { code, message } = parsed.value.error;
            reject(
              new FlowboxError(code === 'CODE_STEP_EGRESS_DENIED' ? code : 'CODE_STEP_FETCH_FAILED', message),
            );
          } else {
            resolve(parsed.value.response);
          }
        });
      });
      req.end(body);
    });
  };
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
