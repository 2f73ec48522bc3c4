import type { PieceLog } from '@flowbox/pieces-framework';
import {
  type CallbackAnswer,
  type EngineCallback,
  type EngineToWorker,
  type ExecuteResult,
  FlowboxError,
  type LogPersisted,
  parseMessage,
  type WorkerToEngine,
  WorkerToEngineSchema,
} from '@flowbox/protocol';
import type { IpcPort } from './ipc-port.ts';

/** The engine's log: lines travel to the worker, which writes them with its logger. */
export type EngineLog = PieceLog;

/** What the worker asks of the engine; callback answers are the channel's own. */
export type WorkerRequest = Exclude<WorkerToEngine, { type: 'callback-answer' }>;

/** The engine's typed side of the IPC channel (main.ts sends `ready` on the raw port). */
export interface EngineIpcChannel {
  /** An execute result, a poll's result, or how a log upload that followed an execute result ended. */
  send(
    message: ExecuteResult | LogPersisted | Extract<EngineToWorker, { type: 'poll-result' }>,
  ): Promise<void>;
  log: EngineLog;
  /**
   * Sends a callback for the worker to forward to the app, and resolves with the app's answer.
   * Rejects CALLBACK_FAILED when the worker is gone or no answer comes within `timeoutMs`.
   */
  call(callback: EngineCallback, timeoutMs: number): Promise<CallbackAnswer>;
  /** Every frame is parsed; bad ones are dropped with a log line. */
  onMessage(handler: (message: WorkerRequest) => void): void;
}

export function createIpcChannel(port: IpcPort): EngineIpcChannel {
  const send = (message: EngineToWorker): Promise<void> =>
    new Promise((resolve, reject) => {
      // After the worker is gone nobody can receive anything; the engine is about to exit.
      if (!port.connected) {
        resolve();
        return;
      }
      port.send(message, (error) => (error ? reject(error) : resolve()));
    });
  const log: EngineLog = (level, msg, data) => {
    const message: EngineToWorker = { version: 1, type: 'log', level, msg };
    if (data !== undefined) message.data = data;
    send(message).catch(() => {});
  };
  const calls = new Map<number, { settle(answer: CallbackAnswer | FlowboxError): void }>();
  let nextCallId = 1;
  port.onDisconnect(() => {
    for (const call of calls.values()) call.settle(new FlowboxError('CALLBACK_FAILED', 'the worker is gone'));
  });

  return {
    send: (message) => send(message),
    log,
    call(callback, timeoutMs) {
      const callId = nextCallId++;
      return new Promise<CallbackAnswer>((resolve, reject) => {
        const timer = setTimeout(
          () =>
            settle(new FlowboxError('CALLBACK_FAILED', `no answer to the callback within ${timeoutMs} ms`)),
          timeoutMs,
        );
        function settle(answer: CallbackAnswer | FlowboxError): void {
          if (!calls.delete(callId)) return;
          clearTimeout(timer);
          if (answer instanceof FlowboxError) reject(answer);
          else resolve(answer);
        }
        calls.set(callId, { settle });
        if (!port.connected) return settle(new FlowboxError('CALLBACK_FAILED', 'the worker is gone'));
        port.send({ version: 1, type: 'callback', callId, callback }, (error) => {
          if (error)
            settle(new FlowboxError('CALLBACK_FAILED', `could not send the callback: ${error.message}`));
        });
      });
    },
    onMessage(handler) {
      port.onMessage((frame) => {
        const parsed = parseMessage(WorkerToEngineSchema, frame);
        if (!parsed.ok) {
          log('warn', 'dropped a bad IPC frame', { error: parsed.error });
          return;
        }
        const message = parsed.value;
        if (message.type === 'callback-answer') calls.get(message.callId)?.settle(message.answer);
        else handler(message);
      });
    },
  };
}
