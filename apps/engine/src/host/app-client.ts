import {
  CallbackErrorBodySchema,
  ENGINE_CALLBACK_PATHS,
  ERROR_CATALOG,
  ErrorCodeSchema,
  FlowboxError,
  type FlowResponse,
  type FlowResponseReport,
  type StepReport,
  type StepResult,
  type SubflowStart,
  TRACEPARENT_HEADER,
} from '@flowbox/protocol';
import type { HttpClient } from './http-client.ts';

/**
 * The engine's callbacks to the app for one run; any failure is `CALLBACK_FAILED`, but a response
 * the app refuses to send (`INVALID_RESPONSE`), which fails the response step.
 */
export interface AppClient {
  reportSteps(steps: StepResult[]): Promise<void>;
  /**
   * The response, with the steps finished before it that no progress report carried; `last`
   * when no step follows it (FlowResponseReport).
   */
  reportResponse(response: FlowResponse, steps: StepResult[], last: boolean): Promise<void>;
  /**
   * Asks the app to start a `flow` step's child run (or name the one it started for this path
   * already); resolves with its run id. A refusal that is the flow's fault (SUBFLOW_TOO_DEEP,
   * FLOW_NOT_FOUND) keeps its code, so the step fails with it.
   */
  startSubflow(start: SubflowRequest): Promise<string>;
}

/** What a `flow` step asks of the app: SubflowStart without its envelope. */
export type SubflowRequest = Omit<SubflowStart, 'version' | 'type'>;

/**
 * A sub-flow's refusal that is the flow's fault (a user-family code: SUBFLOW_TOO_DEEP,
 * FLOW_NOT_FOUND) keeps its code; anything else is CALLBACK_FAILED.
 */
export function subflowRefusal(code: string, message: string): FlowboxError {
  const parsed = ErrorCodeSchema.safeParse(code);
  if (parsed.success && ERROR_CATALOG[parsed.data].family === 'user')
    return new FlowboxError(parsed.data, message);
  return new FlowboxError('CALLBACK_FAILED', `the subflow-start callback was refused: ${code}: ${message}`);
}

export interface AppClientOptions {
  http: HttpClient;
  appUrl: string;
  engineToken: string;
  runId: string;
  timeoutMs: number;
  /** A traced run's open span, sent as the `traceparent` header; unset when untraced. */
  traceparent?: (() => string) | undefined;
}

/** The error the app answered a callback with, else null. */
function callbackError(excerpt: string): { code: string; message: string } | null {
  let body: unknown;
  try {
    body = JSON.parse(excerpt);
  } catch {
    return null;
  }
  const parsed = CallbackErrorBodySchema.safeParse(body);
  return parsed.success ? parsed.data.error : null;
}

/** A response the app will not send (INVALID_RESPONSE) is the flow's fault, not a failed callback. */
function responseRefusal(_status: number, excerpt: string): FlowboxError | null {
  const error = callbackError(excerpt);
  return error?.code === 'INVALID_RESPONSE' ? new FlowboxError('INVALID_RESPONSE', error.message) : null;
}

export function createAppClient(options: AppClientOptions): AppClient {
  // Keep any path prefix of the app URL (a reverse proxy may mount the app under one).
  const base = options.appUrl.replace(/\/+$/, '');
  const post = async (
    path: string,
    report: StepReport | FlowResponseReport | SubflowStart,
    refused: (status: number, excerpt: string) => FlowboxError | null = responseRefusal,
  ): Promise<string> => {
    let status: number;
    let excerpt: string;
    const headers: Record<string, string> = {
      authorization: `Bearer ${options.engineToken}`,
      'content-type': 'application/json',
    };
    if (options.traceparent !== undefined) headers[TRACEPARENT_HEADER] = options.traceparent();
    try {
      const response = await options.http.request({
        method: 'POST',
        url: `${base}${path}`,
        headers,
        body: JSON.stringify(report),
        timeoutMs: options.timeoutMs,
      });
      status = response.status;
      excerpt = response.bodyExcerpt;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      throw new FlowboxError('CALLBACK_FAILED', `POST ${path} failed: ${message}`, { cause: error });
    }
    if (status < 200 || status > 299) {
      throw (
        refused(status, excerpt) ??
        new FlowboxError('CALLBACK_FAILED', `POST ${path} answered ${status}: ${excerpt.slice(0, 500)}`)
      );
    }
    return excerpt;
  };
  return {
    async reportSteps(steps) {
      await post(ENGINE_CALLBACK_PATHS.steps(options.runId), { version: 1, type: 'steps', steps });
    },
    async reportResponse(response, steps, last) {
      await post(ENGINE_CALLBACK_PATHS.response(options.runId), {
        version: 1,
        type: 'flow-response',
        response,
        steps,
        last,
      });
    },
    async startSubflow(start) {
      const path = ENGINE_CALLBACK_PATHS.subflows(options.runId);
      const excerpt = await post(path, { version: 1, type: 'subflow-start', ...start }, (_status, text) => {
        const body = callbackError(text);
        return body === null ? null : subflowRefusal(body.code, body.message);
      });
      const runId = startedRunId(excerpt);
      if (runId === null) {
        throw new FlowboxError(
          'CALLBACK_FAILED',
          `POST ${path} answered no run id: ${excerpt.slice(0, 200)}`,
        );
      }
      return runId;
    },
  };
}

/** The child's id from the app's `{ runId }` answer, else null. */
function startedRunId(excerpt: string): string | null {
  try {
    const body: unknown = JSON.parse(excerpt);
    if (typeof body !== 'object' || body === null || !('runId' in body)) return null;
    return typeof body.runId === 'string' && body.runId !== '' ? body.runId : null;
  } catch {
    return null;
  }
}
