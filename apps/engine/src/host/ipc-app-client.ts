import { type CallbackAnswer, type EngineReport, FlowboxError } from '@flowbox/protocol';
import { type AppClient, type AppClientOptions, subflowRefusal } from './app-client.ts';
import type { EngineIpcChannel } from './ipc-channel.ts';

/**
 * The engine's callbacks over its IPC channel: the worker forwards each on its socket to the app,
 * which checks the token as on the HTTP route and answers through the worker. Any failure is
 * CALLBACK_FAILED (the worker's socket down, no answer in time, a refusal), but a response the
 * app refuses to send, which is INVALID_RESPONSE, as over HTTP, and a sub-flow the flow may not
 * start (SUBFLOW_TOO_DEEP, FLOW_NOT_FOUND).
 */
export function createIpcAppClient(
  channel: Pick<EngineIpcChannel, 'call'>,
  options: Omit<AppClientOptions, 'http' | 'appUrl'>,
): AppClient {
  const send = async (report: EngineReport): Promise<CallbackAnswer> => {
    const answer = await channel.call(
      {
        runId: options.runId,
        engineToken: options.engineToken,
        ...(options.traceparent === undefined ? {} : { traceparent: options.traceparent() }),
        report,
      },
      options.timeoutMs,
    );
    if (answer.type !== 'error') return answer;
    const { code, message } = answer.error;
    if (code === 'INVALID_RESPONSE' && report.type === 'flow-response') {
      throw new FlowboxError('INVALID_RESPONSE', message);
    }
    if (report.type === 'subflow-start') throw subflowRefusal(code, message);
    throw new FlowboxError('CALLBACK_FAILED', `the ${report.type} callback was refused: ${code}: ${message}`);
  };
  return {
    reportSteps: async (steps) => {
      await send({ version: 1, type: 'steps', steps });
    },
    reportResponse: async (response, steps, last) => {
      await send({ version: 1, type: 'flow-response', response, steps, last });
    },
    async startSubflow(start) {
      const answer = await send({ version: 1, type: 'subflow-start', ...start });
      if (answer.type !== 'subflow-started') {
        throw new FlowboxError(
          'CALLBACK_FAILED',
          `the subflow-start callback was answered ${answer.type}, not a run id`,
        );
      }
      return answer.runId;
    },
  };
}
