import type { EgressFetch, EgressRequest } from '@flowbox/egress';
import type { PieceFetch, PieceHttpRequest } from '@flowbox/pieces-framework';
import { FlowboxError } from '@flowbox/protocol';

/** setTimeout's largest delay; a longer timeout is the flow's own (FLOW_TIMEOUT_SECONDS). */
const MAX_TIMEOUT_MS = 2_147_483_647;

/** One piece step's `ctx.fetch`, and the end of the step, which aborts what it left in flight. */
export interface PieceFetchSession {
  readonly fetch: PieceFetch;
  close(): void;
}

/**
 * A piece's HTTP goes through the run's egress fetch, the very function code steps' `fetch`
 * uses: the policy, redirects, size caps and the run's fetch budget hold alike, and in
 * SANDBOXED mode it is the relay to the worker. Only the per-request timeout is the piece's.
 */
export function openPieceFetch(egressFetch: EgressFetch): PieceFetchSession {
  /** Made by the step's first request: most piece steps make none. */
  let aborts: AbortController | undefined;
  return {
    async fetch(request) {
      const checked = checkRequest(request);
      aborts ??= new AbortController();
      const timeoutMs = request.timeoutMs;
      const timeout = timeoutMs === undefined ? undefined : AbortSignal.timeout(timeoutMs);
      const signal = timeout === undefined ? aborts.signal : AbortSignal.any([aborts.signal, timeout]);
      try {
        return await egressFetch(checked, signal);
      } catch (error) {
        if (timeout?.aborted === true && !aborts.signal.aborted) {
          throw new FlowboxError(
            'HTTP_REQUEST_TIMEOUT',
            `${checked.method} ${new URL(checked.url).origin} got no complete answer within ${timeoutMs} ms`,
          );
        }
        throw error;
      }
    },
    close() {
      aborts?.abort(new FlowboxError('CODE_STEP_FETCH_FAILED', 'the step ended'));
    },
  };
}

/** A piece is the engine's own code, but its request is still only trusted as far as it checks out. */
function checkRequest(request: PieceHttpRequest): EgressRequest {
  if (typeof request !== 'object' || request === null) throw invalid('the request is not an object');
  const { url, method, headers = {}, body, timeoutMs, responseEncoding } = request;
  if (typeof url !== 'string') throw invalid('the URL must be a string');
  if (typeof method !== 'string' || !/^[A-Z]{1,16}$/.test(method)) {
    throw invalid(`unsupported method ${String(method)}`);
  }
  if (typeof headers !== 'object' || headers === null) throw invalid('headers must be an object');
  const plainHeaders: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) plainHeaders[name] = String(value);
  if (body !== undefined && typeof body !== 'string') throw invalid('the body must be a string');
  if (
    timeoutMs !== undefined &&
    (!Number.isInteger(timeoutMs) || timeoutMs <= 0 || timeoutMs > MAX_TIMEOUT_MS)
  ) {
    throw invalid(`timeoutMs must be a whole number of milliseconds from 1 to ${MAX_TIMEOUT_MS}`);
  }
  if (responseEncoding !== undefined && responseEncoding !== 'text' && responseEncoding !== 'base64') {
    throw invalid(`responseEncoding must be text or base64, not ${String(responseEncoding)}`);
  }
  return { url, method, headers: plainHeaders, body, responseEncoding };
}

const invalid = (message: string) => new FlowboxError('CODE_STEP_FETCH_FAILED', `fetch failed: ${message}`);
