import {
  CallbackErrorBodySchema,
  ENGINE_CALLBACK_PATHS,
  FlowboxError,
  type FlowResponse,
  type FlowResponseReport,
  type StepReport,
  type StepResult,
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

/** The app's message when it refused the flow's response (INVALID_RESPONSE), else null. */
function invalidResponseRefusal(excerpt: string): string | null {
  let body: unknown;
  try {
    body = JSON.parse(excerpt);
  } catch {
    return null;
  }
  const parsed = CallbackErrorBodySchema.safeParse(body);
  return parsed.success && parsed.data.error.code === 'INVALID_RESPONSE' ? parsed.data.error.message : null;
}

export function createAppClient(options: AppClientOptions): AppClient {
  // Keep any path prefix of the app URL (a reverse proxy may mount the app under one).
  const base = options.appUrl.replace(/\/+$/, '');
  const post = async (path: string, report: StepReport | FlowResponseReport) => {
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
      // A response the app will not send is the flow's fault, not a failed callback.
      const refusal = invalidResponseRefusal(excerpt);
      if (refusal !== null) throw new FlowboxError('INVALID_RESPONSE', refusal);
      throw new FlowboxError('CALLBACK_FAILED', `POST ${path} answered ${status}: ${excerpt.slice(0, 500)}`);
    }
  };
  return {
    reportSteps: (steps) =>
      post(ENGINE_CALLBACK_PATHS.steps(options.runId), { version: 1, type: 'steps', steps }),
    reportResponse: (response, steps, last) =>
      post(ENGINE_CALLBACK_PATHS.response(options.runId), {
        version: 1,
        type: 'flow-response',
        response,
        steps,
        last,
      }),
  };
}
