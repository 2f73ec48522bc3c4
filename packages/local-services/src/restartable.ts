import { setTimeout as delay } from 'node:timers/promises';
import { freePort, isPortFree } from './free-port.ts';
import { type LocalService, MissingBinaryError } from './local-service.ts';
import type { ManagedProcess, ProcessExit } from './managed-process.ts';
import { once } from './once.ts';

/**
 * A local server that fault-injection tests can stop, start again on the same port with the
 * same data, and freeze. The server is the one process `spawn` returns; nothing else moves.
 */
export interface Restartable {
  /** The latest server process (it changes with every start; kept after a stop), for leak checks. */
  readonly pid: number | undefined;
  /** False after a stop, and after the server died by itself (so `start` starts it again). */
  readonly running: boolean;
  /** Resolves with how the latest server process exited (a supervisor waits on it). */
  exited(): Promise<ProcessExit>;
  /** Stops the server as its operator would (`signal`, then SIGKILL after the grace). */
  stop(signal?: NodeJS.Signals): Promise<void>;
  /** Starts it again on the same port and data directory; resolves once it answers. */
  start(): Promise<void>;
  /** SIGSTOP: the port stays open and connections are accepted, but nothing answers (a slow server). */
  pause(): void;
  /** SIGCONT after `pause`. */
  resume(): void;
}

/** A restartable server on 127.0.0.1: `pid` and `running` follow restarts. */
export interface RestartableServer extends LocalService, Restartable {
  port: number;
}

export interface RestartableLaunch {
  /** The executable's name and how to install it, for a MissingBinaryError. */
  binary: string;
  installHint: string;
  /** 0 or unset: a free port, and another one (up to 3 tries) when the server finds it taken. */
  port: number | undefined;
  /** What the server prints when its port is taken. */
  portTaken: RegExp;
  url(port: number): string;
  /** Starts one server process on `port`; every restart calls it again with the same port. */
  launch(port: number): ManagedProcess;
  /** Resolves once the process answers; rejects when it exits or the deadline passes. */
  ready(child: ManagedProcess, port: number): Promise<unknown>;
  /** How its operator stops it: this signal, then SIGKILL after `graceMs`. */
  stopSignal: NodeJS.Signals;
  graceMs: number;
  /** After the last stop on close (a temporary directory to remove, say). */
  afterClose?: () => Promise<void>;
}

const PORT_ATTEMPTS = 3;
const PORT_RELEASE_MS = 10_000;

/** The server could not bind a port it was given to pick: try another. */
class PortTakenError extends Error {}

/** Starts a server that fault tests can stop, start again on the same port, and freeze. */
export async function startRestartable(launch: RestartableLaunch): Promise<RestartableServer> {
  const pickPort = launch.port === undefined || launch.port === 0;
  for (let attempt = 1; ; attempt++) {
    const port = pickPort ? await freePort() : (launch.port ?? 0);
    let first: ManagedProcess;
    try {
      first = await launchReady(launch, port, pickPort && attempt < PORT_ATTEMPTS);
    } catch (error) {
      if (error instanceof PortTakenError) continue;
      throw error;
    }
    const server = restartable({
      first,
      port,
      stopSignal: launch.stopSignal,
      graceMs: launch.graceMs,
      spawn: () => launchReady(launch, port, false),
    });
    return {
      port,
      url: launch.url(port),
      get pid() {
        return server.pid;
      },
      get running() {
        return server.running;
      },
      exited: server.exited,
      stop: server.stop,
      start: server.start,
      pause: server.pause,
      resume: server.resume,
      close: once(async () => {
        await server.close();
        await launch.afterClose?.();
      }),
    };
  }
}

/** One process, ready; killed when it is not. */
async function launchReady(launch: RestartableLaunch, port: number, mayPickAnotherPort: boolean) {
  const child = launch.launch(port);
  try {
    await launch.ready(child, port);
    return child;
  } catch (error) {
    await child.stop('SIGKILL', 1_000);
    const exit = await child.exited;
    if (exit.missingBinary) throw new MissingBinaryError(launch.binary, launch.installHint);
    if (mayPickAnotherPort && launch.portTaken.test(child.recentOutput())) throw new PortTakenError();
    throw error;
  }
}

export function restartable(options: {
  first: ManagedProcess;
  port: number;
  stopSignal: NodeJS.Signals;
  graceMs: number;
  spawn: () => Promise<ManagedProcess>;
}): Restartable & { close(): Promise<void> } {
  let current: ManagedProcess | undefined;
  let latest: ManagedProcess = options.first;
  let paused = false;
  const adopt = (process: ManagedProcess) => {
    current = process;
    latest = process;
    // Died by itself: not running, so `start` brings it back.
    void process.exited.then(() => {
      if (current === process) current = undefined;
    });
  };
  adopt(options.first);
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
    exited: () => latest.exited,
    stop,
    async start() {
      if (current !== undefined) return;
      // The old process's socket may linger for a moment after it exited.
      const deadline = Date.now() + PORT_RELEASE_MS;
      while (!(await isPortFree(options.port)) && Date.now() < deadline) await delay(50);
      adopt(await options.spawn());
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
