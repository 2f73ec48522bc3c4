import { readFileSync } from 'node:fs';

/**
 * A process's resident set size in bytes, from `/proc/<pid>/status` (one small read, no
 * message to the engine, so it also works on an engine that stopped answering). Undefined where
 * there is no procfs or the process is gone: the memory threshold is then not applied.
 *
 * Synchronous on purpose: the warm engine supply reads it after every job, procfs answers from
 * memory, and fs/promises' readFile would cost four thread-pool round trips each time.
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
