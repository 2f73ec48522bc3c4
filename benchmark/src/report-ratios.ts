import { fmt } from './format.ts';
import { PROCESS_KINDS } from './proc-stats.ts';
import type { RepeatResult, ScenarioResult } from './result-types.ts';
import { summarize } from './stats.ts';

/** One figure of a scenario, read the same way from both sides of a `--baseline` run. */
export interface Figure {
  name: string;
  /** Whether a larger value is better (throughput) or worse (latency, cost). */
  better: 'higher' | 'lower';
  read: (r: ScenarioResult) => number | null;
}

/** CPU of every process kind in a repeat, per successful request. */
function allKindsCpuMs(repeat: RepeatResult): number | null {
  if (repeat.processes === null || repeat.requests === 0) return null;
  const seconds = PROCESS_KINDS.reduce((sum, kind) => sum + (repeat.processes?.[kind]?.cpuSeconds ?? 0), 0);
  return (seconds * 1000) / repeat.requests;
}

/** The whole machine's busy CPU in a repeat (/proc/stat), per successful request. */
function machineCpuMs(repeat: RepeatResult): number | null {
  if (repeat.machineCpuSeconds == null || repeat.requests === 0) return null;
  return (repeat.machineCpuSeconds * 1000) / repeat.requests;
}

/** CPU ms per request of every process kind together: the median over a scenario's repeats. */
export const allKindsCpuMsPerRequest = (r: ScenarioResult): number | null =>
  summarize(r.repeats.map(allKindsCpuMs))?.median ?? null;

/** The whole machine's CPU ms per request: the median over a scenario's repeats. */
export const machineCpuMsPerRequest = (r: ScenarioResult): number | null =>
  summarize(r.repeats.map(machineCpuMs))?.median ?? null;

export const FIGURES: readonly Figure[] = [
  { name: 'req/s', better: 'higher', read: (r) => r.summary?.reqPerSec?.median ?? null },
  { name: 'p50 ms', better: 'lower', read: (r) => r.summary?.latency.p50?.median ?? null },
  { name: 'p99 ms', better: 'lower', read: (r) => r.summary?.latency.p99?.median ?? null },
  {
    name: 'CPU ms/req, all processes',
    better: 'lower',
    read: allKindsCpuMsPerRequest,
  },
  {
    name: 'CPU ms/req, whole machine',
    better: 'lower',
    read: machineCpuMsPerRequest,
  },
  ...PROCESS_KINDS.map(
    (kind): Figure => ({
      name: `CPU ms/req, ${kind}`,
      better: 'lower',
      read: (r) => r.summary?.processes[kind]?.cpuMsPerRequest?.median ?? null,
    }),
  ),
  { name: 'redis cmd/req', better: 'lower', read: (r) => r.summary?.redisCommandsPerRequest?.median ?? null },
  {
    name: 'redis RT/req',
    better: 'lower',
    read: (r) => r.summary?.redisRoundTripsPerRequest?.median ?? null,
  },
  {
    name: 'pg stmt/req',
    better: 'lower',
    read: (r) => r.summary?.postgresStatementsPerRequest?.median ?? null,
  },
  {
    name: 'worker busy ms',
    better: 'lower',
    read: (r) => r.summary?.anatomy?.workerBusyMs?.mean?.median ?? null,
  },
  { name: 'boot ms', better: 'lower', read: (r) => r.summary?.anatomy?.bootMs?.mean?.median ?? null },
];

export const RATIO_HEADERS = ['scenario', 'figure', 'baseline', 'this tree', 'ratio'] as const;

/** this tree / baseline; null when either side is missing or the baseline is 0. */
export function ratio(baseline: number | null, tree: number | null): number | null {
  if (baseline === null || tree === null || baseline === 0) return null;
  return tree / baseline;
}

/** A row per scenario and figure that either side measured, matched by scenario name. */
export function ratioRows(
  baseline: readonly ScenarioResult[],
  tree: readonly ScenarioResult[],
  figures: readonly Figure[] = FIGURES,
): string[][] {
  const rows: string[][] = [];
  for (const ours of tree) {
    const theirs = baseline.find((r) => r.scenario.name === ours.scenario.name);
    if (theirs === undefined) continue;
    for (const figure of figures) {
      const a = figure.read(theirs);
      const b = figure.read(ours);
      if (a === null && b === null) continue;
      const r = ratio(a, b);
      rows.push([
        ours.scenario.name,
        figure.name,
        fmt(a, 2),
        fmt(b, 2),
        r === null ? '–' : `${r.toFixed(2)}×`,
      ]);
    }
  }
  return rows;
}
