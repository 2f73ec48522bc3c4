import { realpathSync } from 'node:fs';
import {
  bubblewrapArgs,
  noNewProcessesFilter,
  sandboxUnavailable,
  systemReadOnlyBinds,
} from '@flowbox/sandbox';

/**
 * Where a piece's load check runs, decided once at start (app.ts) from PIECE_LOAD_CHECK and what
 * the machine can do:
 * - `sandboxed`: a bubblewrap sandbox (sandboxedLoadCommand), the default;
 * - `unsandboxed`: a plain child process, only when PIECE_LOAD_CHECK=UNSANDBOXED says so;
 * - `unavailable`: PIECE_LOAD_CHECK=SANDBOXED on a machine that cannot make the sandbox. Pieces
 *   sent to `POST /v1/pieces` are refused (PIECE_CHECK_UNAVAILABLE, naming `reason`); the
 *   built-in pieces, which ship with the app's own code, are still checked in a plain child.
 */
export type LoadCheckIsolation =
  | { mode: 'sandboxed'; seccomp: Buffer }
  | { mode: 'unsandboxed' }
  | { mode: 'unavailable'; reason: string };

export type PieceLoadCheckSetting = 'SANDBOXED' | 'UNSANDBOXED';

export function loadCheckIsolation(setting: PieceLoadCheckSetting): LoadCheckIsolation {
  if (setting === 'UNSANDBOXED') return { mode: 'unsandboxed' };
  const seccomp = noNewProcessesFilter();
  if (seccomp === null) {
    return { mode: 'unavailable', reason: `flowbox has no seccomp filter for ${process.arch}` };
  }
  const reason = sandboxUnavailable('PIECE_LOAD_CHECK=SANDBOXED');
  return reason === null ? { mode: 'sandboxed', seccomp } : { mode: 'unavailable', reason };
}

/** Bounds of one load check's sandbox: a piece's module loads in megabytes and milliseconds. */
export const LOAD_CHECK_LIMITS = {
  /** RLIMIT_AS: Node reserves about 1 GiB of address space before it runs anything. */
  addressSpaceBytes: 3 * 1024 * 1024 * 1024,
  /** V8's old space (--max-old-space-size), in MiB: a module's heap at load. */
  heapMb: 256,
  /**
   * RLIMIT_CPU, in seconds: a backstop well past the wall-clock deadline (LOAD_CHECK_TIMEOUT_MS),
   * which stops a busy module first. Node's threads together can use more CPU than wall time, so
   * a bound equal to the deadline could end a spinning module first, with another message.
   */
  cpuSeconds: 30,
  openFiles: 256,
  /** The private /tmp. */
  tmpBytes: 16 * 1024 * 1024,
} as const;

export interface SandboxedLoad {
  /** Host directories the child reads: the piece's, and where its own modules and zod live. */
  readable: readonly string[];
  /** The directory it starts in (the piece's). */
  cwd: string;
  /** Node's arguments after the binary. */
  nodeArgs: readonly string[];
  /** The seccomp program's file descriptor in the spawned process. */
  seccompFd: number;
}

/**
 * `prlimit` and its arguments, then bwrap's, then node: the load-check child with no network
 * (its own network namespace holds only a loopback), no process of the host (its own PID
 * namespace: `process.ppid` is the sandbox's init), nothing writable but a private /tmp of 16
 * MiB, the readable directories read-only at their own paths, no process of its own (seccomp),
 * and bounded address space, heap, CPU time and open files.
 */
export function sandboxedLoadCommand(load: SandboxedLoad): { command: string; args: string[] } {
  const bwrapArgs = bubblewrapArgs({
    hostname: 'flowbox-piece-check',
    tmpBytes: LOAD_CHECK_LIMITS.tmpBytes,
    readOnlyBinds: [...systemReadOnlyBinds(), ...load.readable.map((dir) => ({ source: realpathSync(dir) }))],
    chdir: load.cwd,
    seccompFd: load.seccompFd,
    command: [
      realpathSync(process.execPath),
      `--max-old-space-size=${LOAD_CHECK_LIMITS.heapMb}`,
      ...load.nodeArgs,
    ],
  });
  const limits = [
    `--as=${LOAD_CHECK_LIMITS.addressSpaceBytes}`,
    `--cpu=${LOAD_CHECK_LIMITS.cpuSeconds}`,
    `--nofile=${LOAD_CHECK_LIMITS.openFiles}`,
    '--core=0',
  ];
  return { command: 'prlimit', args: [...limits, '--', 'bwrap', ...bwrapArgs] };
}
