import type { EgressFetch, EgressRequest } from '@flowbox/egress';
import { type ConsoleLine, FlowboxError, serializeError } from '@flowbox/protocol';
import { createStepLines } from '../steps/step-lines.ts';

export { CONSOLE_MAX_BYTES } from '../steps/step-lines.ts';

/**
 * What a code step's sandbox may ask of the engine, in plain strings and numbers both ways so
 * nothing of the engine's realm crosses in (both runners wrap these into the code step's
 * `console`, `setTimeout`/`setInterval` and `fetch`; see code-step-script.ts).
 */
export interface CodeStepHost {
  log(level: unknown, message: unknown): void;
  /** Resolves after `ms`, or at once when the step has ended (its timers no longer fire). */
  sleep(ms: unknown): Promise<void>;
  /** A request as JSON text → `{ response }` or `{ error: { code, message } }` as JSON text. */
  fetch(requestJson: unknown): Promise<string>;
}

/** One code step's host: what it printed, the refusals it got, and its timers and requests. */
export interface CodeStepSession {
  readonly host: CodeStepHost;
  /** Console lines in order, the last one saying how much was dropped past the cap. */
  lines(): ConsoleLine[];
  /**
   * The error a failed step reports: when the code failed on a refusal it did not catch (the
   * sandbox sees only its message), the refusal itself, so the step says
   * `EGRESS_DENIED` rather than a generic `CODE_STEP_FAILED`.
   */
  failureOf(error: unknown): unknown;
  /** The step is over: pending timers never fire and requests in flight are aborted. */
  close(): void;
}

export function openCodeStepSession(fetcher: EgressFetch): CodeStepSession {
  const lines = createStepLines();
  /** Sleeps in progress, each with what settles it. */
  const sleeping = new Map<NodeJS.Timeout, () => void>();
  /** Made by the step's first fetch: most steps make none, and an abort costs an Error. */
  let aborts: AbortController | undefined;
  const refusals: FlowboxError[] = [];
  let closed = false;

  const host: CodeStepHost = {
    log(level, message) {
      lines.add(level, message);
    },
    sleep(ms) {
      const delay = Math.min(Math.max(0, Number(ms) || 0), 2_147_483_647);
      if (closed) return Promise.resolve();
      return new Promise((resolve) => {
        const timer = setTimeout(() => {
          sleeping.delete(timer);
          resolve();
        }, delay);
        sleeping.set(timer, resolve);
      });
    },
    async fetch(requestJson) {
      try {
        const request = parseRequest(requestJson);
        aborts ??= new AbortController();
        const response = await fetcher(request, aborts.signal);
        return JSON.stringify({ response });
      } catch (error) {
        const failure =
          error instanceof FlowboxError
            ? error
            : new FlowboxError('CODE_STEP_FETCH_FAILED', `fetch failed: ${String(error)}`);
        refusals.push(failure);
        const { code, message } = serializeError(failure, 'CODE_STEP_FETCH_FAILED');
        return JSON.stringify({ error: { code, message } });
      }
    },
  };

  return {
    host,
    lines: () => lines.lines(),
    failureOf(error) {
      if (!(error instanceof FlowboxError) || error.code !== 'CODE_STEP_FAILED') return error;
      const refusal = refusals.find((candidate) => error.message.includes(candidate.message));
      return refusal === undefined
        ? error
        : new FlowboxError(refusal.code, refusal.message, { cause: error });
    },
    close() {
      closed = true;
      lines.close();
      // Settled rather than left pending: isolated-vm fails a run whose host promises are
      // collected unsettled ("Promise was abandoned"). The sandbox's timers were cleared when the
      // step settled, so none of their callbacks runs; a timed-out step's context is gone.
      for (const [timer, resolve] of sleeping) {
        clearTimeout(timer);
        resolve();
      }
      sleeping.clear();
      aborts?.abort(new FlowboxError('CODE_STEP_TIMEOUT', 'the code step ended'));
    },
  };
}

/** The sandbox builds the request; here it is only trusted as far as it checks out. */
function parseRequest(json: unknown): EgressRequest {
  const value: unknown = typeof json === 'string' ? JSON.parse(json) : null;
  if (typeof value !== 'object' || value === null) throw invalid('the request is not an object');
  const { url, method, headers, body } = value as Record<string, unknown>;
  if (typeof url !== 'string') throw invalid('the URL must be a string');
  if (typeof method !== 'string' || !/^[A-Z]{1,16}$/.test(method))
    throw invalid(`unsupported method ${String(method)}`);
  if (typeof headers !== 'object' || headers === null) throw invalid('headers must be an object');
  const plainHeaders: Record<string, string> = {};
  for (const [name, headerValue] of Object.entries(headers)) plainHeaders[name] = String(headerValue);
  if (body !== undefined && typeof body !== 'string') throw invalid('the body must be a string');
  return { url, method, headers: plainHeaders, body };
}

const invalid = (message: string) => new FlowboxError('CODE_STEP_FETCH_FAILED', `fetch failed: ${message}`);
