import type { EngineToWorker } from '@flowbox/protocol';

/**
 * The engine's end of the IPC channel, as raw frames. It is on the boot path, so it imports
 * nothing at run time (the protocol's schemas load after `ready`, see main.ts); frames are
 * parsed by the channel built on top of it (ipc-channel.ts).
 */
export interface IpcPort {
  readonly connected: boolean;
  send(message: EngineToWorker, callback: (error: Error | null) => void): void;
  /** One listener; frames that arrived before it was set are handed to it first, in order. */
  onMessage(listener: (frame: unknown) => void): void;
  onDisconnect(listener: () => void): void;
}

/** The port of a forked process; it starts holding incoming frames at once. */
export function processIpcPort(proc: NodeJS.Process): IpcPort {
  const send = proc.send?.bind(proc);
  if (send === undefined) throw new Error('the engine must be forked with an IPC channel');
  const early: unknown[] = [];
  let listener: ((frame: unknown) => void) | undefined;
  proc.on('message', (frame: unknown) => {
    if (listener === undefined) early.push(frame);
    else listener(frame);
  });
  return {
    get connected() {
      return proc.connected;
    },
    send: (message, callback) => {
      send(message, undefined, undefined, callback);
    },
    onMessage(next) {
      if (listener !== undefined) throw new Error('the IPC port already has a listener');
      listener = next;
      for (const frame of early.splice(0)) next(frame);
    },
    onDisconnect: (next) => proc.on('disconnect', next),
  };
}
