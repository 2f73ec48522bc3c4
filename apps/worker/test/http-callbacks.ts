import {
  CallbackErrorBodySchema,
  callbackRefusal,
  ENGINE_CALLBACK_PATHS,
  TRACEPARENT_HEADER,
} from '@flowbox/protocol';
import type { ForwardCallback } from '../src/jobs/callback-forwarding.ts';

/**
 * The engine's callbacks passed on as the app's HTTP callback requests (path, token, traceparent
 * and body as an engine outside a worker sends them), so a test reads them from a fake app's
 * record. The worker itself forwards them on its socket (app-connection.ts).
 */
export function forwardOverHttp(appUrl: string): ForwardCallback {
  return async ({ runId, engineToken, traceparent, report }) => {
    const path =
      report.type === 'steps' ? ENGINE_CALLBACK_PATHS.steps(runId) : ENGINE_CALLBACK_PATHS.response(runId);
    const headers: Record<string, string> = {
      authorization: `Bearer ${engineToken}`,
      'content-type': 'application/json',
    };
    if (traceparent !== undefined) headers[TRACEPARENT_HEADER] = traceparent;
    const response = await fetch(`${appUrl}${path}`, {
      method: 'POST',
      headers,
      body: JSON.stringify(report),
    });
    const text = await response.text();
    if (response.ok) return { version: 1, type: 'ok' };
    let body: unknown;
    try {
      body = JSON.parse(text);
    } catch {
      body = null;
    }
    const refused = CallbackErrorBodySchema.safeParse(body);
    return refused.success
      ? callbackRefusal(refused.data.error.code, refused.data.error.message)
      : callbackRefusal('CALLBACK_FAILED', `POST ${path} answered ${response.status}: ${text.slice(0, 500)}`);
  };
}
