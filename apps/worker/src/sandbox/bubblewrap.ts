import { spawnSync } from 'node:child_process';
import { readFileSync, realpathSync } from 'node:fs';
import path from 'node:path';
import { RELAY_SOCKET_IN_SANDBOX } from '@flowbox/protocol';
import {
  bubblewrapArgs,
  sandboxUnavailable as bubblewrapUnavailable,
  systemReadOnlyBinds,
} from '@flowbox/sandbox';

/**
 * How a sandboxed engine is started (EXECUTION_MODE=SANDBOXED): bubblewrap with new user, PID,
 * IPC, UTS, mount, network and cgroup namespaces (@flowbox/sandbox), run through `prlimit` for
 * its limits.
 *
 * What the engine sees: read-only, at their own paths, the Node binary, the system's shared
 * libraries, the installed engine bundle and the isolated-vm package it imports, and, at the
 * cache's own paths, its job's flow bundle and unpacked pieces only (job-view.ts); its relay's
 * socket at /run/flowbox/relay.sock; its own /proc and a minimal /dev; a private /tmp of
 * SANDBOX_TMP_BYTES. Not the worker's home, environment, token or cache for writing; no
 * network interface but its own loopback; no process of the host. It dies with the worker
 * (`--die-with-parent`), and a seccomp filter (@flowbox/sandbox) keeps it from starting any
 * process. Its environment is only what the worker hands it.
 */

export interface SandboxLimits {
  /** The size of the sandbox's private /tmp. */
  tmpBytes: number;
  /** RLIMIT_NOFILE. */
  openFiles: number;
  /** RLIMIT_AS: Node and V8 reserve far more address space than they use, so this is generous. */
  addressSpaceBytes: number;
}

export const DEFAULT_SANDBOX_LIMITS: SandboxLimits = {
  tmpBytes: 64 * 1024 * 1024,
  openFiles: 1_024,
  addressSpaceBytes: 32 * 1024 * 1024 * 1024,
};

export interface SandboxLayout {
  /** The installed engine bundle's directory (engine.mjs and node_modules/isolated-vm). */
  engineDir: string;
  /** The isolated-vm package that directory's symlink points at. */
  isolatedVmDir: string;
  /** Host directories bound read-only at another path: the job's view of the cache (job-view.ts). */
  readOnlyBinds: Array<{ source: string; target: string }>;
  /** The host directory holding this engine's relay socket (`relay.sock`). */
  relayDir: string;
  /** The file descriptor, in the child, of the seccomp program. */
  seccompFd: number;
  limits: SandboxLimits;
}

/**
 * `prlimit` and its arguments, then bwrap's, then node and its arguments: the engine entry, or
 * `--snapshot-blob <blob>` for an engine started from its snapshot.
 */
export function sandboxCommand(
  layout: SandboxLayout,
  nodeArgs: string[],
): { command: string; args: string[] } {
  const bwrapArgs = bubblewrapArgs({
    hostname: 'flowbox-engine',
    tmpBytes: layout.limits.tmpBytes,
    readOnlyBinds: [
      ...systemReadOnlyBinds(),
      { source: layout.engineDir },
      ...isolatedVmDirs(layout.isolatedVmDir).map((source) => ({ source })),
      ...layout.readOnlyBinds,
      { source: layout.relayDir, target: path.dirname(RELAY_SOCKET_IN_SANDBOX) },
    ],
    chdir: '/tmp',
    seccompFd: layout.seccompFd,
    command: [realpathSync(process.execPath), ...nodeArgs],
  });
  const limits = [
    `--nofile=${layout.limits.openFiles}`,
    `--as=${layout.limits.addressSpaceBytes}`,
    // Counted per user, so only a bound for a non-root worker; the seccomp filter holds for all.
    '--nproc=4096',
  ];
  return { command: 'prlimit', args: [...limits, '--', 'bwrap', ...bwrapArgs] };
}

/**
 * The launcher of every engine that is not SANDBOXED (ENGINE_PID_NAMESPACE): bubblewrap with a
 * user and a PID namespace of its own, no capability, and a /proc that shows only the engine.
 * The engine keeps the worker's view of files and network; what it no longer sees is every
 * process outside its namespace: no /proc/<pid>/environ, mem or cmdline of the worker (which
 * holds WORKER_TOKEN), nor of any other process on the host, and no pid to signal or ptrace.
 * `hiddenFiles` (WORKER_TOKEN_FILE, at its given and its real path) are covered by /dev/null on a
 * nodev mount: opening one fails EACCES.
 * The IPC channel and the environment pass through unchanged.
 */
export function pidNamespaceLauncher(hiddenFiles: string[]): { command: string; args: string[] } {
  const hidden = [...new Set(hiddenFiles.flatMap((file) => [path.resolve(file), realpathOr(file)]))];
  return {
    command: 'bwrap',
    args: [
      '--unshare-user',
      '--unshare-pid',
      '--die-with-parent',
      '--new-session',
      '--cap-drop',
      'ALL',
      '--dev-bind',
      '/',
      '/',
      '--proc',
      '/proc',
      ...hidden.flatMap((file) => ['--ro-bind', '/dev/null', file]),
      '--',
    ],
  };
}

function realpathOr(file: string): string {
  try {
    return realpathSync(file);
  } catch {
    return path.resolve(file);
  }
}

/**
 * Why engines cannot start in their own PID namespace here, or null when they can: a probe of
 * the launcher above, which needs bwrap and unprivileged user namespaces.
 */
export function pidNamespaceUnavailable(): string | null {
  const { command, args } = pidNamespaceLauncher([]);
  const probe = spawnSync(command, [...args, 'true'], { encoding: 'utf8', timeout: 10_000 });
  if (probe.status === 0) return null;
  const reason = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim();
  return `engines start in their own PID namespace (bubblewrap) so that piece code cannot read the worker's token from /proc, and bubblewrap cannot create one here (${reason}). Install bubblewrap and allow user namespaces (docs/operations.md), or set ENGINE_PID_NAMESPACE=false to accept engines that can read this worker's token`;
}

/**
 * isolated-vm and what it requires at run time, at their real paths: the folder holding the
 * package (with pnpm, its dependencies are symlinks beside it) and each dependency's own folder.
 */
function isolatedVmDirs(isolatedVmDir: string): string[] {
  const packageDir = realpathSync(isolatedVmDir);
  const modulesDir = path.dirname(packageDir);
  const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8')) as {
    dependencies?: Record<string, string>;
  };
  const dependencies = Object.keys(manifest.dependencies ?? {}).map((name) =>
    realpathSync(path.join(modulesDir, name)),
  );
  return [modulesDir, ...dependencies.filter((dir) => !dir.startsWith(`${modulesDir}/`))];
}

/** Why this machine cannot run sandboxed engines, or null when it can (@flowbox/sandbox). */
export function sandboxUnavailable(): string | null {
  return bubblewrapUnavailable('EXECUTION_MODE=SANDBOXED');
}
