import { spawnSync } from 'node:child_process';
import { existsSync, realpathSync } from 'node:fs';

/**
 * What every flowbox bubblewrap sandbox shares (a worker's SANDBOXED engine, the app's piece
 * load check): new user, PID, IPC, UTS, mount, network and cgroup namespaces, no capability, a
 * private /tmp of a bounded size, read-only binds of what the process inside needs, its own
 * /proc and a minimal /dev, the whole root read-only but /tmp, and a seccomp program given by
 * file descriptor. It dies with its parent and starts a new session (no terminal to write to).
 * Limits (RLIMIT_*) are the caller's: `prlimit` in front of `bwrap`.
 */

export interface ReadOnlyBind {
  source: string;
  /** Where it appears inside; its own path when not given. */
  target?: string;
}

export interface BubblewrapOptions {
  hostname: string;
  /** The size of the private /tmp. */
  tmpBytes: number;
  /** Bound after the private /tmp, so binds of paths under the host's /tmp go on top of it. */
  readOnlyBinds: readonly ReadOnlyBind[];
  /** The working directory inside. */
  chdir: string;
  /** The file descriptor, in bwrap, of the seccomp program (noNewProcessesFilter). */
  seccompFd: number;
  /** What runs inside: the program and its arguments. */
  command: readonly string[];
}

/** The system directories a dynamically linked Node needs, where they exist. */
const SYSTEM_DIRS = ['/usr', '/lib', '/lib64', '/lib32', '/libx32'];
const SYSTEM_FILES = ['/etc/ld.so.cache', '/etc/ld.so.conf'];

/** The system's libraries and this process's Node binary, read-only at their own paths. */
export function systemReadOnlyBinds(): ReadOnlyBind[] {
  return [
    ...[...SYSTEM_DIRS, ...SYSTEM_FILES].filter((entry) => existsSync(entry)).map((source) => ({ source })),
    { source: realpathSync(process.execPath) },
  ];
}

/** bwrap's arguments (not the command `bwrap` itself). */
export function bubblewrapArgs(options: BubblewrapOptions): string[] {
  return [
    '--unshare-all',
    '--die-with-parent',
    '--new-session',
    '--hostname',
    options.hostname,
    '--cap-drop',
    'ALL',
    // The private /tmp first: binds of paths under the host's /tmp go on top of it.
    '--size',
    String(options.tmpBytes),
    '--tmpfs',
    '/tmp',
    ...options.readOnlyBinds.flatMap(({ source, target }) => ['--ro-bind', source, target ?? source]),
    '--proc',
    '/proc',
    '--dev',
    '/dev',
    // Everything but /tmp read-only, the mount points bubblewrap made on its root included.
    '--remount-ro',
    '/',
    '--chdir',
    options.chdir,
    '--seccomp',
    String(options.seccompFd),
    '--',
    ...options.command,
  ];
}

/**
 * Why this machine cannot make these sandboxes, or null when it can: bubblewrap and prlimit on
 * PATH, and a sandbox with every namespace actually starting (user namespaces may be disabled,
 * or refused by a container's seccomp or AppArmor profile). `feature` names what needs them.
 */
export function sandboxUnavailable(feature: string): string | null {
  const install = 'install bubblewrap (Debian and Ubuntu: apt-get install bubblewrap)';
  const bwrap = spawnSync('bwrap', ['--version'], { encoding: 'utf8' });
  if (bwrap.error !== undefined)
    return `${feature} needs bubblewrap (bwrap), which is not on PATH: ${install}`;
  const prlimit = spawnSync('prlimit', ['--version'], { encoding: 'utf8' });
  if (prlimit.error !== undefined) return `${feature} needs prlimit (util-linux), which is not on PATH`;
  const probe = spawnSync(
    'bwrap',
    ['--unshare-all', '--die-with-parent', '--ro-bind', '/', '/', '--proc', '/proc', '--dev', '/dev', 'true'],
    { encoding: 'utf8', timeout: 10_000 },
  );
  if (probe.status !== 0) {
    const reason = (probe.stderr || probe.error?.message || `exit ${probe.status}`).trim();
    return `${feature}: bubblewrap cannot create a sandbox here (${reason}); it needs user namespaces (see docs/operations.md)`;
  }
  return null;
}
