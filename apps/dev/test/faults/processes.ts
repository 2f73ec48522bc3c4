// Process inspection through /proc for the fault-injection suite: which processes live, whose
// children they are, what they hold (memory, file descriptors). Linux only, like the suite.
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';

interface ProcStat {
  pid: number;
  ppid: number;
  state: string;
}

function readStat(pid: number): ProcStat | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { pid, state: fields[0] ?? '?', ppid: Number(fields[1]) };
  } catch {
    return null;
  }
}

function allPids(): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number);
}

/** The parent of `pid`, or null when it is gone or has none. */
export function parentOf(pid: number): number | null {
  const parent = readStat(pid)?.ppid;
  return parent === undefined || parent <= 0 ? null : parent;
}

/** True while the process exists and is not a zombie. */
export function isRunning(pid: number): boolean {
  const stat = readStat(pid);
  return stat !== null && stat.state !== 'Z';
}

/** Live (non-zombie) children of `pid`. */
export function childrenOf(pid: number): number[] {
  return allPids().filter((candidate) => {
    const stat = readStat(candidate);
    return stat !== null && stat.ppid === pid && stat.state !== 'Z';
  });
}

/** Live processes whose command line mentions `dir`: a stack's engines run files under its dataDir. */
export function processesUnder(dir: string): number[] {
  return allPids().filter((pid) => {
    if (pid === process.pid || !isRunning(pid)) return false;
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(dir);
    } catch {
      return false;
    }
  });
}

/** Resident memory in bytes, or null when the process is gone. */
export function rssBytes(pid: number): number | null {
  try {
    const match = /^VmRSS:\s+(\d+) kB$/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match === null ? null : Number(match[1]) * 1024;
  } catch {
    return null;
  }
}

/** Open file descriptors by kind (socket, pipe, anon_inode, file), or null when the process is gone. */
export function openFds(
  pid: number,
): { total: number; sockets: number; byKind: Record<string, number> } | null {
  let fds: string[];
  try {
    fds = readdirSync(`/proc/${pid}/fd`);
  } catch {
    return null;
  }
  const byKind: Record<string, number> = {};
  for (const fd of fds) {
    let target: string;
    try {
      target = readlinkSync(`/proc/${pid}/fd/${fd}`);
    } catch {
      continue;
    }
    const kind = /^(\w+):\[/.exec(target)?.[1] ?? (target.startsWith('anon_inode:') ? 'anon_inode' : 'file');
    byKind[kind] = (byKind[kind] ?? 0) + 1;
  }
  return { total: fds.length, sockets: byKind.socket ?? 0, byKind };
}

/** The engines a worker holds right now (its live children). */
export function enginesOf(workerPid: number): number[] {
  return childrenOf(workerPid);
}

export function killQuietly(pid: number): void {
  try {
    process.kill(pid, 'SIGKILL');
  } catch {}
}

/**
 * The process holding the local end of a loopback TCP connection from `port` (what a server sees
 * as its client's remote port), through /proc/net/tcp and the processes' file descriptors.
 */
export function ownerOfLocalPort(port: number): number | null {
  const hexPort = port.toString(16).toUpperCase().padStart(4, '0');
  const inodes = new Set<string>();
  for (const table of ['/proc/net/tcp', '/proc/net/tcp6']) {
    let text: string;
    try {
      text = readFileSync(table, 'utf8');
    } catch {
      continue;
    }
    for (const line of text.split('\n').slice(1)) {
      const fields = line.trim().split(/\s+/);
      if (fields[1]?.endsWith(`:${hexPort}`) && fields[9] !== undefined) inodes.add(`socket:[${fields[9]}]`);
    }
  }
  for (const pid of allPids()) {
    if (pid === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${pid}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      try {
        if (inodes.has(readlinkSync(`/proc/${pid}/fd/${fd}`))) return pid;
      } catch {}
    }
  }
  return null;
}

/**
 * An engine as its worker started it: the outermost bubblewrap above `pid` (the engine's own
 * PID namespace, or its sandbox), or `pid` itself when it runs under no launcher. Killing it
 * ends the engine; it is the pid the worker reports.
 */
export function engineAsStarted(pid: number): number {
  let current = pid;
  for (;;) {
    const parent = readStat(current)?.ppid;
    if (parent === undefined || parent <= 1) return current;
    let command: string;
    try {
      command = readFileSync(`/proc/${parent}/comm`, 'utf8').trim();
    } catch {
      return current;
    }
    if (command !== 'bwrap' && command !== 'prlimit') return current;
    current = parent;
  }
}

/** A stack's engines as their workers started them: one pid each, whatever launcher they run under. */
export function enginesUnder(dir: string): number[] {
  return [...new Set(processesUnder(dir).map(engineAsStarted))];
}
