import {
  cpuBetween,
  type KindRoots,
  PROCESS_KINDS,
  type ProcessKind,
  type ProcSnapshot,
  readTreeStats,
  snapshotOf,
} from '../proc-stats.ts';

/** Every process of the stack's CPU time at one moment (the bench's /proc accounting). */
export interface CpuMark {
  /** performance.now() when read. */
  at: number;
  snapshot: ProcSnapshot;
}

/** CPU of each process kind over a window: seconds used, and cores (seconds per second). */
export interface CpuWindow {
  seconds: number;
  cpuSeconds: Record<ProcessKind, number>;
  cores: Record<ProcessKind, number>;
}

export function markCpu(roots: KindRoots): CpuMark {
  return { at: performance.now(), snapshot: snapshotOf(readTreeStats(roots), roots) };
}

export function cpuWindow(start: CpuMark, end: CpuMark, ticksPerSecond: number): CpuWindow {
  const seconds = (end.at - start.at) / 1000;
  const cpuSeconds = cpuBetween(start.snapshot, end.snapshot, ticksPerSecond);
  const cores = Object.fromEntries(
    PROCESS_KINDS.map((kind) => [kind, seconds > 0 ? cpuSeconds[kind] / seconds : 0]),
  ) as Record<ProcessKind, number>;
  return { seconds, cpuSeconds, cores };
}

/** The cores of the given kinds together. */
export function sumCores(window: CpuWindow, kinds: readonly ProcessKind[]): number {
  return kinds.reduce((total, kind) => total + window.cores[kind], 0);
}

/** The tiers every run shares, whatever the workers do: the apps, Redis and Postgres. */
export const SHARED_KINDS = ['app', 'redis', 'postgres'] as const;

/** Cores the shared tiers used over the window, together. */
export function sharedCores(window: CpuWindow): number {
  return SHARED_KINDS.reduce((sum, kind) => sum + window.cores[kind], 0);
}
