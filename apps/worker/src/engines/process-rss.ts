import { readFileSync } from 'node:fs';

/**
 * A process's resident set size in bytes, from `/proc/<pid>/status`: no message to the engine,
 * so it works on one that stopped answering. Undefined without procfs or the process: the
 * memory threshold is then not applied. Read synchronously: procfs answers from memory, and
 * readFile's thread-pool round trips would come after every warm job.
 */
export async function readRssBytes(pid: number): Promise<number | undefined> {
  let status: string;
  try {
    status = readFileSync(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}
