import { readFile } from 'node:fs/promises';

/**
 * A process's resident set size in bytes, from `/proc/<pid>/status` (one small read, no
 * message to the engine, so it also works on an engine that stopped answering). Undefined where
 * there is no procfs or the process is gone: the memory threshold is then not applied.
 */
export async function readRssBytes(pid: number): Promise<number | undefined> {
  let status: string;
  try {
    status = await readFile(`/proc/${pid}/status`, 'utf8');
  } catch {
    return undefined;
  }
  const kb = /^VmRSS:\s+(\d+)\s+kB$/m.exec(status)?.[1];
  return kb === undefined ? undefined : Number(kb) * 1024;
}
