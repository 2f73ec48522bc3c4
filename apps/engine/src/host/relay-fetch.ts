import {
  CODE_STEP_FETCH_LIMITS,
  type EgressFetch,
  type EgressRequest,
  type EgressResponse,
  type FetchBudget,
  type FetchSlot,
  requestBytes,
} from '@flowbox/egress';
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
 * run's budget holds here too: a request waits for a slot, and the answer counts against the
 * run's bytes as it arrives (the worker holds the run to the same budget on its side). The
 * step's signal aborts the exchange, which the relay passes on to the request it made.
 */
export function createRelayEgressFetch(socketPath: string, budget: FetchBudget): EgressFetch {
  return async (request, signal) => {
    const slot = await budget.acquire(signal, requestBytes(request));
    try {
      return await exchange(socketPath, request, signal, slot);
    } finally {
      slot.release();
    }
  };
}

function exchange(
  socketPath: string,
  request: EgressRequest,
  signal: AbortSignal,
  slot: FetchSlot,
): Promise<EgressResponse> {
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
          : error instanceof FlowboxError
            ? error
            : new FlowboxError('CODE_STEP_FETCH_FAILED', `fetch failed: ${error.message}`),
      ),
    );
    req.on('response', (res) => {
      const chunks: Buffer[] = [];
      let size = 0;
      res.on('data', (chunk: Buffer) => {
        size += chunk.byteLength;
        if (size > MAX_ANSWER_BYTES) return req.destroy(new Error('the relay answer is too large'));
        try {
          slot.hold(chunk.byteLength);
        } catch (error) {
          return req.destroy(error as Error);
        }
        chunks.push(chunk);
      });
      res.on('end', () => {
        const parsed = parseMessage(RelayFetchAnswerSchema, safeJson(Buffer.concat(chunks).toString('utf8')));
        if (!parsed.ok) {
          reject(
            new FlowboxError('CODE_STEP_FETCH_FAILED', `fetch failed: the relay answered ${res.statusCode}`),
          );
        } else if ('error' in parsed.value) {
          const { code, message } = parsed.value.error;
          reject(new FlowboxError(isRelayed(code) ? code : 'CODE_STEP_FETCH_FAILED', message));
        } else {
          resolve(parsed.value.response);
        }
      });
    });
    req.end(body);
  });
}

/** The refusals the worker's answer may name; anything else is a failed fetch. */
type RelayedCode = 'EGRESS_DENIED' | 'CODE_STEP_FETCH_LIMIT';
const RELAYED_CODES = new Set<string>(['EGRESS_DENIED', 'CODE_STEP_FETCH_LIMIT']);
const isRelayed = (code: string): code is RelayedCode => RELAYED_CODES.has(code);

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}
