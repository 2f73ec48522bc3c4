import { type ChildProcess, spawn } from 'node:child_process';
import { findExecutable } from './find-binary.ts';
import { ServiceStartError } from './local-service.ts';
import type { SystemUser } from './system-user.ts';

export interface ProcessExit {
  code: number | null;
  signal: NodeJS.Signals | null;
  /** The executable could not be found (spawn ENOENT, or setpriv's exit code 127). */
  missingBinary: boolean;
}

/** One line a process wrote to stdout or stderr. */
export interface LogLine {
  raw: string;
  /** The parsed JSON object when the line is a structured (pino) log line. */
  json: Record<string, unknown> | null;
}

export interface SpawnOptions {
  /** Shown in error messages and logs, e.g. `redis-server` or `worker-0`. */
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  /** The child's whole environment; unset, it inherits this process's (Node's default). */
  env?: Record<string, string>;
  /** Run as this user (needs root); PostgreSQL refuses to run as root. */
  user?: SystemUser;
  /**
   * Sent to the child by the kernel when this process dies without closing it (even on
   * SIGKILL), so servers never outlive the process that started them. Needs `setpriv`
   * (util-linux); without it the child is only killed on a normal exit of this process.
   */
  parentDeathSignal?: NodeJS.Signals;
  /**
   * Starts the child in a process group (a session) of its own, so that a terminal's Ctrl-C or
   * hang-up reaches only this process, which then stops the child in its own order (`pnpm dev`
   * stops workers before apps before stores). Its own children (a worker's engines) follow it.
   */
  ownProcessGroup?: boolean;
  /** Opens an IPC channel to a Node child; its first message resolves `firstMessage`. */
  ipc?: boolean;
  /** Every line the child writes, as it comes. */
  onLine?: (line: LogLine) => void;
}

export interface ManagedProcess {
  readonly name: string;
  /** -1 when the process never started. */
  readonly pid: number;
  /** Resolves (never rejects) when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /**
   * With `ipc`: the child's first message (e.g. the app's `{ type: 'ready', url }`); rejects when
   * the child exits first. Without `ipc` it never resolves.
   */
  readonly firstMessage: Promise<unknown>;
  /** The last lines the process wrote to stdout and stderr. */
  recentOutput(): string;
  /**
   * Resolves with the first line, already written or still to come, that matches; rejects when
   * the process exits first or `timeoutMs` passes.
   */
  waitForLine(match: RegExp | ((line: LogLine) => boolean), timeoutMs: number): Promise<LogLine>;
  /** Sends `signal`, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(signal?: NodeJS.Signals, graceMs?: number): Promise<ProcessExit>;
}

/** Enough for a late waiter to still find a ready line, and for an error's tail. */
const KEPT_LINES = 1_000;
const TAIL_LINES = 60;
const SETPRIV_DIRS = ['/usr/bin', '/bin'];

/**
 * The one way flowbox's tooling runs a child process: the stores of `pnpm dev` and the tests
 * (redis-server, postgres, versitygw) and the app and worker processes of a local stack. Output
 * is always drained and kept, callers wait on lines or messages rather than on time, and the
 * child never outlives this process.
 */
export function spawnManaged(options: SpawnOptions): ManagedProcess {
  const setpriv = options.parentDeathSignal === undefined ? null : findExecutable('setpriv', SETPRIV_DIRS);
  const [command, args] =
    setpriv === null || options.parentDeathSignal === undefined
      ? [options.command, [...options.args]]
      : [setpriv, ['--pdeathsig', options.parentDeathSignal, '--', options.command, ...options.args]];

  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    env: options.env,
    detached: options.ownProcessGroup === true,
    stdio: ['ignore', 'pipe', 'pipe', ...(options.ipc === true ? (['ipc'] as const) : [])],
    ...(options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid }),
  });

  const lines: LogLine[] = [];
  const lineListeners = new Set<(line: LogLine) => void>();
  const pushLine = (raw: string) => {
    const line: LogLine = { raw, json: parseJsonLine(raw) };
    lines.push(line);
    if (lines.length > KEPT_LINES) lines.shift();
    options.onLine?.(line);
    for (const listener of lineListeners) listener(line);
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    let partial = '';
    stream.setEncoding('utf8');
    // Always drain the pipes: a full pipe would block the child.
    stream.on('data', (chunk: string) => {
      const parts = (partial + chunk).split('\n');
      partial = parts.pop() ?? '';
      for (const part of parts) pushLine(part);
    });
    stream.on('end', () => {
      if (partial !== '') pushLine(partial);
      partial = '';
    });
  }
  const tail = () =>
    lines
      .slice(-TAIL_LINES)
      .map((line) => line.raw)
      .join('\n');

  // Covers process.exit() and normal exits; the parent-death signal covers crashes and SIGKILL.
  const killOnParentExit = () => child.kill('SIGKILL');
  process.on('exit', killOnParentExit);

  let exitInfo: ProcessExit | null = null;
  const exited = new Promise<ProcessExit>((resolve) => {
    const finish = (exit: ProcessExit) => {
      if (exitInfo !== null) return;
      exitInfo = exit;
      process.off('exit', killOnParentExit);
      resolve(exit);
    };
    child.once('error', (error: NodeJS.ErrnoException) => {
      // 'error' without a later 'exit' means the process never started.
      if (child.pid === undefined || error.code === 'ENOENT') {
        finish({ code: null, signal: null, missingBinary: error.code === 'ENOENT' });
      }
    });
    child.once('close', (code, signal) => {
      finish({ code, signal, missingBinary: setpriv !== null && code === 127 });
    });
  });
  const exitedEarly = (exit: ProcessExit) =>
    new ServiceStartError(`${options.name} exited before it was ready (${describeExit(exit)})`, tail());

  const firstMessage = new Promise<unknown>((resolve, reject) => {
    if (options.ipc !== true) return;
    child.once('message', resolve);
    void exited.then((exit) => reject(exitedEarly(exit)));
  });
  // Callers that never wait for it must not see an unhandled rejection.
  firstMessage.catch(() => {});

  return {
    name: options.name,
    pid: child.pid ?? -1,
    exited,
    firstMessage,
    recentOutput: tail,
    waitForLine(match, timeoutMs) {
      const matches = typeof match === 'function' ? match : (line: LogLine) => match.test(line.raw);
      const seen = lines.find(matches);
      if (seen !== undefined) return Promise.resolve(seen);
      return new Promise<LogLine>((resolve, reject) => {
        const cleanup = () => {
          clearTimeout(timer);
          lineListeners.delete(onLine);
        };
        const onLine = (line: LogLine) => {
          if (!matches(line)) return;
          cleanup();
          resolve(line);
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(new ServiceStartError(`${options.name} was not ready after ${timeoutMs} ms`, tail()));
        }, timeoutMs);
        lineListeners.add(onLine);
        void exited.then((exit) => {
          if (!lineListeners.has(onLine)) return;
          cleanup();
          reject(exitedEarly(exit));
        });
      });
    },
    async stop(signal = 'SIGTERM', graceMs = 10_000) {
      if (exitInfo !== null) return exitInfo;
      child.kill(signal);
      let timer: NodeJS.Timeout | undefined;
      const timedOut = new Promise<'timeout'>((resolve) => {
        timer = setTimeout(() => resolve('timeout'), graceMs);
      });
      const first = await Promise.race([exited, timedOut]);
      clearTimeout(timer);
      if (first === 'timeout') child.kill('SIGKILL');
      return exited;
    },
  };
}

function parseJsonLine(raw: string): Record<string, unknown> | null {
  if (!raw.startsWith('{')) return null;
  try {
    const value: unknown = JSON.parse(raw);
    return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}

export function describeExit(exit: ProcessExit): string {
  if (exit.missingBinary) return 'executable not found';
  if (exit.signal !== null) return `signal ${exit.signal}`;
  return `exit code ${exit.code ?? 'unknown'}`;
}
