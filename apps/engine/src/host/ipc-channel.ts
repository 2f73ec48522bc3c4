import type { PieceLog } from '@flowbox/pieces-framework';
import {
  type EngineToWorker,
  type ExecuteResult,
  parseMessage,
  type WorkerToEngine,
  WorkerToEngineSchema,
} from '@flowbox/protocol';
import type { IpcPort } from './ipc-port.ts';

/** The engine's log: lines travel to the worker, which writes them with its logger. */
export type EngineLog = PieceLog;

/** The engine's typed side of the IPC channel (main.ts sends `ready` on the raw port). */
export interface EngineIpcChannel {
  sendResult(result: ExecuteResult): Promise<void>;
  log: EngineLog;
  /** Every frame is parsed; bad ones are dropped with a log line. */
  onMessage(handler: (message: WorkerToEngine) => void): void;
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
  return {
    sendResult: (result) => send(result),
    log,
    onMessage(handler) {
      port.onMessage((frame) => {
        const parsed = parseMessage(WorkerToEngineSchema, frame);
        if (!parsed.ok) {
          log('warn', 'dropped a bad IPC frame', { error: parsed.error });
          return;
        }
        handler(parsed.value);
      });
    },
  };
}
