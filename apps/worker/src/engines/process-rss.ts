import { readdirSync, readFileSync } from 'node:fs';

/**
 * A process's resident set size in bytes, from `/proc/<pid>/status`: no message to the engine,
 * so it works on one that stopped answering. Undefined without procfs or the process: the
 * memory threshold is then not applied. Read synchronously: procfs answers from memory, and
 * readFile's thread-pool round trips would come after every warm job.
 */
export async function readRssBytes(pid: number): Promise<number | undefined> {
  return readRssBytesSync(pid);
}

/**
 * Reads an engine's resident memory after a job (ENGINE_MAX_RSS_MB, the RSS metric). The pid the
 * worker holds is its launcher's (bubblewrap) when the engine has its own PID namespace or
 * sandbox, so the memory read is that of the node process at the end of the launcher's line of
 * children (only each process's main thread is asked: the launchers have no other, and node
 * forks from its main thread). That pid is found once per engine and kept, so a warm job costs
 * one read of procfs, as an engine without a launcher does.
 */
export function createEngineRssReader(): (pid: number) => Promise<number | undefined> {
  /** Launcher pid → its engine's node pid; a handful of engines live per worker. */
  const nodes = new Map<number, number>();
  return async (pid) => {
    const known = nodes.get(pid);
    if (known !== undefined) {
      const rss = readRssBytesSync(known);
      if (rss !== undefined) return rss;
      nodes.delete(pid);
    }
    const node = lastMainChild(pid);
    if (node === undefined) return undefined;
    if (nodes.size >= 8) nodes.clear();
    nodes.set(pid, node);
    return readRssBytesSync(node);
  };
}

/** `pid`'s last descendant down its main threads' first children, `pid` itself without any. */
function lastMainChild(pid: number): number | undefined {
  if (readRssBytesSync(pid) === undefined) return undefined;
  let current = pid;
  for (let depth = 0; depth < 8; depth += 1) {
    const [child] = mainThreadChildrenOf(current);
    if (child === undefined) return current;
    current = child;
  }
  return current;
}

function mainThreadChildrenOf(pid: number): number[] {
  try {
    return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
      .split(' ')
      .filter((word) => word.trim() !== '')
      .map(Number);
  } catch {
    return [];
  }
}

/**
 * The resident memory of a process and all its descendants: a sandboxed engine's node runs
 * under bubblewrap, two processes below the one the worker started. Undefined as above.
 */
export function readTreeRssBytes(pid: number): number | undefined {
  const own = readRssBytesSync(pid);
  if (own === undefined) return undefined;
  let total = own;
  for (const child of childrenOf(pid)) total += readTreeRssBytes(child) ?? 0;
  return total;
}

function readRssBytesSync(pid: number): number | undefined {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}

/** From each thread's `children` list (threads may fork too); empty where procfs lacks it. */
export function childrenOf(pid: number): number[] {
  try {
    return readdirSync(`/proc/${pid}/task`).flatMap((tid) =>
      readFileSync(`/proc/${pid}/task/${tid}/children`, 'utf8')
        .split(' ')
        .filter((word) => word.trim() !== '')
        .map(Number),
    );
  } catch {
    return [];
  }
}
