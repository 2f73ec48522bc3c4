import type { PieceLog } from '@flowbox/pieces-framework';
import {
  type EngineToWorker,
  type ExecuteResult,
  parseMessage,
  type WorkerToEngine,
  WorkerToEngineSchema,
} from '@flowbox/protocol';

/** The engine's log: lines travel to the worker, which writes them with its logger. */
export type EngineLog = PieceLog;

/** The parts of `process` the channel uses, so tests can stand in for a forked process. */
export interface IpcPort {
  readonly connected: boolean;
  send(message: EngineToWorker, callback: (error: Error | null) => void): void;
  onMessage(listener: (frame: unknown) => void): void;
  onDisconnect(listener: () => void): void;
}

export interface EngineIpcChannel {
  sendReady(): void;
  sendResult(result: ExecuteResult): Promise<void>;
  log: EngineLog;
  /** Every frame is parsed; bad ones are dropped with a log line. */
  onMessage(handler: (message: WorkerToEngine) => void): void;
  onDisconnect(handler: () => void): void;
}

export function processIpcPort(proc: NodeJS.Process): IpcPort {
  const send = proc.send?.bind(proc);
  if (send === undefined) throw new Error('the engine must be forked with an IPC channel');
  return {
    get connected() {
      return proc.connected;
    },
    send: (message, callback) => {
      send(message, undefined, undefined, callback);
    },
    onMessage: (listener) => proc.on('message', listener),
    onDisconnect: (listener) => proc.on('disconnect', listener),
  };
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
    sendReady: () => {
      send({ version: 1, type: 'ready', pid: process.pid }).catch(() => {});
    },
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
    onDisconnect: (handler) => port.onDisconnect(handler),
  };
}
