import { readdirSync, readFileSync } from 'node:fs';

/**
 * Kills `roots` and every descendant at once with SIGKILL, synchronously: the last resort when
 * a second Ctrl-C asks the runner to quit without waiting for a clean shutdown.
 */
export function killProcessTrees(roots: Iterable<number>, procDir = '/proc'): void {
  const children = new Map<number, number[]>();
  let entries: string[] = [];
  try {
    entries = readdirSync(procDir).filter((name) => /^\d+$/.test(name));
  } catch {
    // No /proc: only the roots can be signalled.
  }
  for (const name of entries) {
    try {
      const text = readFileSync(`${procDir}/${name}/stat`, 'utf8');
      const ppid = Number(text.slice(text.lastIndexOf(')') + 2).split(' ')[1]);
      const list = children.get(ppid) ?? [];
      list.push(Number(name));
      children.set(ppid, list);
    } catch {
      // Exited meanwhile.
    }
  }
  const victims = new Set<number>();
  const visit = (pid: number) => {
    if (victims.has(pid) || pid === process.pid) return;
    victims.add(pid);
    for (const child of children.get(pid) ?? []) visit(child);
  };
  for (const root of roots) visit(root);
  for (const pid of victims) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Already gone.
    }
  }
}
