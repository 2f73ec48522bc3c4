import { type EngineReport, FlowboxError } from '@flowbox/protocol';
import type { AppClient, AppClientOptions } from './app-client.ts';
import type { EngineIpcChannel } from './ipc-channel.ts';

/**
 * The engine's callbacks over its IPC channel: the worker forwards each on its socket to the app,
 * which checks the token as on the HTTP route and answers through the worker. Any failure is
 * CALLBACK_FAILED (the worker's socket down, no answer in time, a refusal), but a response the
 * app refuses to send, which is INVALID_RESPONSE, as over HTTP.
 */
export function createIpcAppClient(
  channel: Pick<EngineIpcChannel, 'call'>,
  options: Omit<AppClientOptions, 'http' | 'appUrl'>,
): AppClient {
  const send = async (report: EngineReport): Promise<void> => {
    const answer = await channel.call(
      {
        runId: options.runId,
        engineToken: options.engineToken,
        ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent() }),
        report,
      },
      options.timeoutMs,
    );
    if (answer.type !== 'error') return;
    const { code, message } = answer.error;
    if (code === 'INVALID_RESPONSE' && report.type === 'flow-response') {
      throw new FlowboxError('INVALID_RESPONSE', message);
    }
    throw new FlowboxError('CALLBACK_FAILED', `the ${report.type} callback was refused: ${code}: ${message}`);
  };
  return {
    reportSteps: (steps) => send({ version: 1, type: 'steps', steps }),
    reportResponse: (response, steps, last) =>
      send({ version: 1, type: 'flow-response', response, steps, last }),
  };
}
