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
 * An engine's resident memory after a job (ENGINE_MAX_RSS_MB, the RSS metric): its process
 * tree's, since the pid the worker holds is the launcher's (bubblewrap) when the engine has its
 * own PID namespace or sandbox. Only each process's main thread is asked for its children (the
 * launchers have no other; node forks from its main thread): 6 reads of procfs for a namespaced
 * engine instead of readTreeRssBytes' 20 or so, on the warm path (on the loaded 2-core VM: 0.15-0.3
 * ms, the whole tree 0.25-0.5 ms, one status file 0.03-0.04 ms).
 */
export async function readEngineRssBytes(pid: number): Promise<number | undefined> {
  return readMainTreeRssBytes(pid);
}

function readMainTreeRssBytes(pid: number): number | undefined {
  const own = readRssBytesSync(pid);
  if (own === undefined) return undefined;
  let total = own;
  for (const child of mainThreadChildrenOf(pid)) total += readMainTreeRssBytes(child) ?? 0;
  return total;
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
