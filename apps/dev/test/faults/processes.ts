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
