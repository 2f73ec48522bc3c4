import { readdirSync } from 'node:fs';
import { setPriority } from 'node:os';
import { childrenOf } from './process-rss.ts';

/** The nice value of a prewarmed spare while it boots: it takes the CPU the running job leaves. */
export const SPARE_NICENESS = 10;

/**
 * Sets the nice value of every thread of a process (Linux applies a nice value to one thread;
 * threads made later inherit their creator's). False when the kernel refuses: raising a
 * priority back (a lower nice value) needs CAP_SYS_NICE or a matching RLIMIT_NICE.
 */
export function setProcessNiceness(pid: number, niceness: number): boolean {
  try {
    let tasks: string[];
    try {
      tasks = readdirSync(`/proc/${pid}/task`);
    } catch {
      tasks = [String(pid)];
    }
    for (const task of tasks) {
      try {
        setPriority(Number(task), niceness);
      } catch (error) {
        // A thread that ended between the listing and the call has nothing left to set.
        if ((error as { info?: { code?: string } }).info?.code !== 'ESRCH') throw error;
      }
    }
    return true;
  } catch {
    return false;
  }
}

/** setProcessNiceness for a process and its descendants (an engine under its launcher). */
export function setTreeNiceness(pid: number, niceness: number): boolean {
  let done = setProcessNiceness(pid, niceness);
  for (const child of childrenOf(pid)) done = setTreeNiceness(child, niceness) && done;
  return done;
}
