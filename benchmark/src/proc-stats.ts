import { execFileSync } from 'node:child_process';
import { closeSync, openSync, readdirSync, readSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

/**
 * CPU time and memory per process kind, read from Linux's /proc.
 *
 * CPU over a window is exact even for processes that live and die inside it (cold engines):
 * a parent's cutime+cstime grows by a child's whole CPU time when it reaps the child, so
 *   cpu(kind) = Σ ticks at end − Σ ticks at start (live members) + Δ reaped-children ticks of
 *               their parents (a worker's reaped children are engines).
 * Not when a chain of reaping breaks: a SANDBOXED engine killed with its bubblewrap dies inside
 * its PID namespace, and no process of ours is credited with its CPU. So each window also reads
 * the whole machine's busy time from /proc/stat (`readMachineBusyTicks`): everything that ran,
 * whoever reaped it, plus whatever else the machine did.
 * RSS peaks come from VmHWM (each process's own high-water mark) read by a periodic sampler,
 * and from the largest per-sample sum of VmRSS over a kind.
 */
export const PROCESS_KINDS = [
  'app',
  'worker',
  'engine',
  'redis',
  'postgres',
  's3',
  'sim',
  'loadgen',
] as const;
export type ProcessKind = (typeof PROCESS_KINDS)[number];

export interface ProcStat {
  pid: number;
  ppid: number;
  comm: string;
  /** utime + stime, in clock ticks. */
  ticks: number;
  /** cutime + cstime: CPU of children this process has reaped, in clock ticks. */
  childTicks: number;
  /** Start time after boot (clock ticks); tells a reused pid from the process that had it before. */
  startTime: number;
}

/** Parses /proc/<pid>/stat. The command name may hold spaces and parentheses: split after the last ')'. */
export function parseProcStat(text: string): ProcStat | null {
  const open = text.indexOf('(');
  const close = text.lastIndexOf(')');
  if (open < 0 || close < open) return null;
  // Fields after the name, numbered as in proc(5): [0] is field 3 (state).
  const rest = text
    .slice(close + 2)
    .trim()
    .split(/\s+/);
  const field = (n: number) => Number(rest[n - 3]);
  const stat = {
    pid: Number(text.slice(0, open).trim()),
    ppid: field(4),
    comm: text.slice(open + 1, close),
    ticks: field(14) + field(15),
    childTicks: field(16) + field(17),
    startTime: field(22),
  };
  return Number.isFinite(stat.pid) && Number.isFinite(stat.ticks) && Number.isFinite(stat.startTime)
    ? stat
    : null;
}

/** VmRSS and VmHWM from /proc/<pid>/status, in kB (null when absent, e.g. for a zombie). */
export function parseProcStatus(text: string): { rssKb: number | null; hwmKb: number | null } {
  const read = (key: string) => {
    const match = new RegExp(`^${key}:\\s+(\\d+)\\s+kB`, 'm').exec(text);
    return match?.[1] === undefined ? null : Number(match[1]);
  };
  return { rssKb: read('VmRSS'), hwmKb: read('VmHWM') };
}

/** The pids each kind starts from; descendants of a root belong to its kind (a worker's are engines). */
export type KindRoots = Partial<Record<Exclude<ProcessKind, 'engine'>, readonly number[]>>;

/** Reaped children of a member of `kind` are of this kind (the load generator's are not counted). */
const CHILD_KIND: Record<ProcessKind, ProcessKind | null> = {
  app: 'app',
  worker: 'engine',
  engine: 'engine',
  redis: 'redis',
  postgres: 'postgres',
  s3: 's3',
  sim: 'sim',
  loadgen: null,
};

/**
 * Assigns kinds by walking up each process's parents to the nearest root. The load generator is
 * the runner itself, whose other children (apps, workers, servers) are roots of their own, so
 * only the root pid itself counts as `loadgen`.
 */
export function classify(stats: ReadonlyMap<number, ProcStat>, roots: KindRoots): Map<number, ProcessKind> {
  const rootKind = new Map<number, Exclude<ProcessKind, 'engine'>>();
  for (const [kind, pids] of Object.entries(roots) as [Exclude<ProcessKind, 'engine'>, number[]][]) {
    for (const pid of pids ?? []) rootKind.set(pid, kind);
  }
  const kinds = new Map<number, ProcessKind>();
  for (const stat of stats.values()) {
    const own = rootKind.get(stat.pid);
    if (own !== undefined) {
      kinds.set(stat.pid, own);
      continue;
    }
    let parent = stats.get(stat.ppid);
    for (let depth = 0; parent !== undefined && depth < 64; depth++) {
      const kind = rootKind.get(parent.pid);
      if (kind !== undefined) {
        const childKind = CHILD_KIND[kind];
        if (childKind !== null) kinds.set(stat.pid, childKind);
        break;
      }
      parent = stats.get(parent.ppid);
    }
  }
  return kinds;
}

export interface ProcSnapshot {
  /** Keyed by `pid:startTime`. */
  members: Map<string, { kind: ProcessKind; ticks: number; childTicks: number }>;
}

export function snapshotOf(stats: ReadonlyMap<number, ProcStat>, roots: KindRoots): ProcSnapshot {
  const kinds = classify(stats, roots);
  const members: ProcSnapshot['members'] = new Map();
  for (const [pid, kind] of kinds) {
    const stat = stats.get(pid);
    if (stat !== undefined) {
      members.set(`${pid}:${stat.startTime}`, { kind, ticks: stat.ticks, childTicks: stat.childTicks });
    }
  }
  return { members };
}

/** CPU seconds per kind between two snapshots (see the formula at the top of this file). */
export function cpuBetween(
  start: ProcSnapshot,
  end: ProcSnapshot,
  ticksPerSecond: number,
): Record<ProcessKind, number> {
  const ticks = Object.fromEntries(PROCESS_KINDS.map((k) => [k, 0])) as Record<ProcessKind, number>;
  for (const [key, member] of end.members) {
    ticks[member.kind] += member.ticks;
    const before = start.members.get(key);
    const childKind = CHILD_KIND[member.kind];
    if (before !== undefined && childKind !== null) ticks[childKind] += member.childTicks - before.childTicks;
  }
  for (const member of start.members.values()) ticks[member.kind] -= member.ticks;
  return Object.fromEntries(PROCESS_KINDS.map((k) => [k, Math.max(0, ticks[k]) / ticksPerSecond])) as Record<
    ProcessKind,
    number
  >;
}

const READ_BUFFER = 8192;

/**
 * Reads a small /proc file synchronously into `buffer`. Plain open/read/close: about ten times
 * cheaper in CPU than fs.promises.readFile, which matters when sampling every 200 ms on 2 cores.
 */
function readProcFile(path: string, buffer: Buffer): string | null {
  let fd: number | undefined;
  try {
    fd = openSync(path, 'r');
    const length = readSync(fd, buffer, 0, buffer.length, 0);
    return buffer.toString('latin1', 0, length);
  } catch {
    // The process exited meanwhile.
    return null;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Reads every process's stat file; processes that vanish meanwhile are skipped. */
export function readAllStats(procDir = '/proc', buffer = Buffer.alloc(READ_BUFFER)): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  for (const name of readdirSync(procDir)) {
    if (!/^\d+$/.test(name)) continue;
    const text = readProcFile(`${procDir}/${name}/stat`, buffer);
    const stat = text === null ? null : parseProcStat(text);
    if (stat !== null) stats.set(stat.pid, stat);
  }
  return stats;
}

/**
 * The stat of every root and its descendants, found through /proc/<pid>/task/<pid>/children
 * (the processes forked by each process's main thread, which is where Node and PostgreSQL fork):
 * a few reads instead of one per process on the machine. Falls back to a full scan on kernels
 * without that file.
 */
export function readTreeStats(
  roots: KindRoots,
  procDir = '/proc',
  buffer = Buffer.alloc(READ_BUFFER),
): Map<number, ProcStat> {
  const stats = new Map<number, ProcStat>();
  const queue = Object.values(roots).flatMap((pids) => [...(pids ?? [])]);
  while (queue.length > 0) {
    const pid = queue.pop() ?? 0;
    if (stats.has(pid)) continue;
    const text = readProcFile(`${procDir}/${pid}/stat`, buffer);
    const stat = text === null ? null : parseProcStat(text);
    if (stat === null) continue;
    stats.set(pid, stat);
    const children = readProcFile(`${procDir}/${pid}/task/${pid}/children`, buffer);
    if (children === null) return readAllStats(procDir, buffer);
    for (const child of children.trim().split(/\s+/)) if (child !== '') queue.push(Number(child));
  }
  return stats;
}

export interface MemoryPeaks {
  /** Largest VmHWM of one process of the kind, MB. */
  peakRssMb: number;
  /** Largest sum of VmRSS over the kind's processes in one sample, MB. */
  peakTotalRssMb: number;
  /** Distinct processes of the kind seen by the sampler. */
  processes: number;
}

/** Running memory peaks per kind, fed one sample at a time. */
export class MemoryPeakTracker {
  readonly #peaks = new Map<ProcessKind, { hwmKb: number; totalKb: number; seen: Set<string> }>();
  readonly #buffer = Buffer.alloc(READ_BUFFER);
  readonly #roots: KindRoots;
  readonly #procDir: string;

  constructor(roots: KindRoots, procDir = '/proc') {
    this.#roots = roots;
    this.#procDir = procDir;
  }

  sample(): void {
    const stats = readTreeStats(this.#roots, this.#procDir, this.#buffer);
    const totals = new Map<ProcessKind, number>();
    for (const [pid, kind] of classify(stats, this.#roots)) {
      const text = readProcFile(`${this.#procDir}/${pid}/status`, this.#buffer);
      if (text === null) continue;
      const status = parseProcStatus(text);
      const peak = this.#peaks.get(kind) ?? { hwmKb: 0, totalKb: 0, seen: new Set<string>() };
      this.#peaks.set(kind, peak);
      peak.seen.add(`${pid}:${stats.get(pid)?.startTime}`);
      peak.hwmKb = Math.max(peak.hwmKb, status.hwmKb ?? status.rssKb ?? 0);
      totals.set(kind, (totals.get(kind) ?? 0) + (status.rssKb ?? 0));
    }
    for (const [kind, total] of totals) {
      const peak = this.#peaks.get(kind);
      if (peak !== undefined) peak.totalKb = Math.max(peak.totalKb, total);
    }
  }

  peaks(): Partial<Record<ProcessKind, MemoryPeaks>> {
    return Object.fromEntries(
      [...this.#peaks].map(([kind, p]) => [
        kind,
        { peakRssMb: p.hwmKb / 1024, peakTotalRssMb: p.totalKb / 1024, processes: p.seen.size },
      ]),
    );
  }
}

/**
 * Samples memory every `intervalMs` until stopped, on a worker thread so that reading /proc
 * never delays the load generator's event loop. Short-lived processes (cold engines) are caught
 * when a sample falls inside their life; their VmHWM then gives their lifetime peak.
 */
export async function startMemorySampler(
  roots: KindRoots,
  intervalMs: number,
  procDir = '/proc',
): Promise<{ stop(): Promise<Partial<Record<ProcessKind, MemoryPeaks>>> }> {
  const worker = new Worker(new URL('./memory-sampler-thread.ts', import.meta.url), {
    workerData: { roots, intervalMs, procDir },
  });
  const messages = (type: string) =>
    new Promise<unknown>((resolve, reject) => {
      const onMessage = (message: { type?: unknown; peaks?: unknown }) => {
        if (message.type !== type) return;
        worker.off('message', onMessage);
        resolve(message.peaks);
      };
      worker.on('message', onMessage);
      worker.once('error', reject);
      worker.once('exit', () => reject(new Error('the memory sampler thread exited')));
    });
  const peaks = messages('peaks');
  peaks.catch(() => {});
  // The thread's start-up costs CPU: let it happen before the measured window opens.
  await messages('ready');
  return {
    async stop() {
      worker.postMessage('stop');
      return (await peaks) as Partial<Record<ProcessKind, MemoryPeaks>>;
    },
  };
}

/**
 * The machine's busy CPU ticks so far, all cores, from the first line of /proc/stat: user, nice,
 * system, irq and softirq (not idle, iowait, or steal, which the hypervisor spent elsewhere: the
 * same time the per-process figures count, plus interrupts no process is charged with). Null
 * when the line cannot be read.
 */
export function parseMachineBusyTicks(text: string): number | null {
  const fields = (text.split('\n', 1)[0] ?? '').trim().split(/\s+/);
  if (fields[0] !== 'cpu' || fields.length < 8) return null;
  const [user, nice, system, , , irq, softirq] = fields.slice(1, 8).map(Number);
  const busy = [user, nice, system, irq, softirq];
  if (busy.some((value) => value === undefined || !Number.isFinite(value))) return null;
  return busy.reduce<number>((sum, value) => sum + (value ?? 0), 0);
}

export function readMachineBusyTicks(procDir = '/proc', buffer = Buffer.alloc(READ_BUFFER)): number | null {
  const text = readProcFile(`${procDir}/stat`, buffer);
  return text === null ? null : parseMachineBusyTicks(text);
}

/** The kernel's USER_HZ (clock ticks per second of /proc CPU times); 100 on nearly every Linux. */
export function clockTicksPerSecond(): number {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isInteger(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
}
