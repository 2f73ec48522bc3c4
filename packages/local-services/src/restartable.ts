import { setTimeout as delay } from 'node:timers/promises';
import { isPortFree } from './free-port.ts';
import type { ManagedProcess } from './managed-process.ts';

/**
 * A local server that fault-injection tests can stop, start again on the same port with the
 * same data, and freeze. The server is the one process `spawn` returns; nothing else moves.
 */
export interface Restartable {
  /** The latest server process (it changes with every start; kept after a stop), for leak checks. */
  readonly pid: number | undefined;
  readonly running: boolean;
  /** Stops the server as its operator would (`signal`, then SIGKILL after the grace). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it answers. */
  start(): Promise<void>;
  /** SIGSTOP: the port stays open and connections are accepted, but nothing answers (a slow server). */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
}

const PORT_RELEASE_MS = 10_000;

/**
 * Keeps one server process at a time. `spawn` starts a process on the fixed port and resolves
 * once it is ready (it has already been started once by the caller, as `first`).
 */
export function restartable(options: {
  first: ManagedProcess;
  port: number;
  stopSignal: NodeJS.Signals;
  graceMs: number;
  spawn: () => Promise<ManagedProcess>;
}): Restartable & { close(): Promise<void> } {
  let current: ManagedProcess | undefined = options.first;
  let latest: ManagedProcess = options.first;
  let paused = false;
  const stop = async (signal: NodeJS.Signals = options.stopSignal): Promise<void> => {
    const process = current;
    current = undefined;
    if (process === undefined) return;
    // A frozen process cannot act on SIGTERM; let it go on so it can.
    if (paused && process.pid !== undefined) globalThis.process.kill(process.pid, 'SIGCONT');
    paused = false;
    await process.stop(signal, options.graceMs);
  };
  return {
    get pid() {
      return latest.pid;
    },
    get running() {
      return current !== undefined;
    },
    stop,
    async start() {
      if (current !== undefined) return;
      // The old process's socket may linger for a moment after it exited.
      const deadline = Date.now() + PORT_RELEASE_MS;
      while (!(await isPortFree(options.port)) && Date.now() < deadline) await delay(50);
      current = await options.spawn();
      latest = current;
    },
    pause() {
      if (current?.pid === undefined || paused) return;
      globalThis.process.kill(current.pid, 'SIGSTOP');
      paused = true;
    },
    resume() {
      if (current?.pid === undefined || !paused) return;
      globalThis.process.kill(current.pid, 'SIGCONT');
      paused = false;
    },
    close: () => stop(),
  };
}
