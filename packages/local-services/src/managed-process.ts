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

export interface SpawnOptions {
  /** Shown in error messages, e.g. `redis-server`. */
  name: string;
  command: string;
  args: readonly string[];
  cwd?: string;
  /** Added to the inherited environment (secrets go here rather than on the command line). */
  extraEnv?: Record<string, string>;
  /** Run as this user (needs root); PostgreSQL refuses to run as root. */
  user?: SystemUser;
  /**
   * Sent to the child by the kernel when this process dies without closing it (even on
   * SIGKILL), so servers never outlive the process that started them. Needs `setpriv`
   * (util-linux); without it the child is only killed on a normal exit of this process.
   */
  parentDeathSignal?: NodeJS.Signals;
}

export interface ManagedProcess {
  readonly pid: number | undefined;
  /** Resolves (never rejects) when the process has exited. */
  readonly exited: Promise<ProcessExit>;
  /** The last lines the process wrote to stdout and stderr. */
  recentOutput(): string;
  /** Resolves when a line matches; rejects when the process exits first or `timeoutMs` passes. */
  waitForLine(pattern: RegExp, timeoutMs: number): Promise<void>;
  /** Sends `signal`, then SIGKILL after `graceMs`; resolves once the process has exited. */
  stop(signal: NodeJS.Signals, graceMs: number): Promise<ProcessExit>;
}

const KEPT_LINES = 60;
const SETPRIV_DIRS = ['/usr/bin', '/bin'];

export function spawnManaged(options: SpawnOptions): ManagedProcess {
  const setpriv = options.parentDeathSignal === undefined ? null : findExecutable('setpriv', SETPRIV_DIRS);
  const [command, args] =
    setpriv === null || options.parentDeathSignal === undefined
      ? [options.command, [...options.args]]
      : [setpriv, ['--pdeathsig', options.parentDeathSignal, '--', options.command, ...options.args]];

  const child: ChildProcess = spawn(command, args, {
    cwd: options.cwd,
    ...(options.extraEnv === undefined ? {} : { env: { ...process.env, ...options.extraEnv } }),
    detached: false,
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(options.user === undefined ? {} : { uid: options.user.uid, gid: options.user.gid }),
  });

  const lines: string[] = [];
  const lineListeners = new Set<(line: string) => void>();
  const pushLine = (line: string) => {
    lines.push(line);
    if (lines.length > KEPT_LINES) lines.shift();
    for (const listener of lineListeners) listener(line);
  };
  for (const stream of [child.stdout, child.stderr]) {
    if (stream === null) continue;
    let partial = '';
    stream.setEncoding('utf8');
    // Always drain the pipes: a full pipe would block the server.
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

  return {
    pid: child.pid,
    exited,
    recentOutput: () => lines.join('\n'),
    waitForLine(pattern, timeoutMs) {
      if (lines.some((line) => pattern.test(line))) return Promise.resolve();
      return new Promise<void>((resolve, reject) => {
        const cleanup = () => {
          clearTimeout(timer);
          lineListeners.delete(onLine);
        };
        const onLine = (line: string) => {
          if (!pattern.test(line)) return;
          cleanup();
          resolve();
        };
        const timer = setTimeout(() => {
          cleanup();
          reject(
            new ServiceStartError(`${options.name} was not ready after ${timeoutMs} ms`, lines.join('\n')),
          );
        }, timeoutMs);
        lineListeners.add(onLine);
        void exited.then((exit) => {
          cleanup();
          reject(
            new ServiceStartError(
              `${options.name} exited before it was ready (${describeExit(exit)})`,
              lines.join('\n'),
            ),
          );
        });
      });
    },
    async stop(signal, graceMs) {
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

export function describeExit(exit: ProcessExit): string {
  if (exit.missingBinary) return 'executable not found';
  if (exit.signal !== null) return `signal ${exit.signal}`;
  return `exit code ${exit.code ?? 'unknown'}`;
}
