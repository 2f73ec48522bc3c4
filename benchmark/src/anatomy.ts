import type { RunSample, TimingField } from './runs-api.ts';
import { TIMING_FIELDS } from './runs-api.ts';
import { ascending, mean, percentile } from './stats.ts';

/**
 * The latency anatomy: where a run's milliseconds went, aggregated over the runs of one
 * measured window. Means add up (the stacked chart uses them); medians show the typical run.
 */
export interface LayerStats {
  mean: number;
  p50: number;
  p95: number;
}

/** Mean milliseconds of each consecutive part of a run; they add up to the mean total. */
export interface AnatomySegments {
  queue: number;
  provision: number;
  boot: number;
  run: number;
  logPersist: number;
  /** Worker-busy time not in the four parts above (reporting the result, bookkeeping). */
  workerOther: number;
  /** After the worker is done until the run's total is recorded (the app finalising it). */
  afterWorker: number;
}
export const SEGMENT_NAMES = [
  'queue',
  'provision',
  'boot',
  'run',
  'logPersist',
  'workerOther',
  'afterWorker',
] as const satisfies readonly (keyof AnatomySegments)[];

export interface Anatomy {
  runs: number;
  succeeded: number;
  withTimings: number;
  statuses: Record<string, number>;
  layers: Record<TimingField, LayerStats> | null;
  provision: { bundleMs: LayerStats; piecesMs: LayerStats; engineMs: LayerStats } | null;
  segments: AnatomySegments | null;
  engines: {
    /** Distinct engine processes that served the runs. */
    distinct: number;
    /** Share of runs whose engine was booted before the job arrived (reused or prewarmed). */
    preBootedShare: number;
    /** Share of runs that were their engine's first job (a fresh engine: cold mode). */
    freshShare: number;
    maxJobsServed: number;
  } | null;
  /** Runs that had to fetch a piece archive (cache misses). */
  pieceMissRuns: number;
}

export function layerStats(values: readonly number[]): LayerStats {
  const sorted = ascending(values);
  return { mean: mean(sorted), p50: percentile(sorted, 50), p95: percentile(sorted, 95) };
}

export function computeAnatomy(runs: readonly RunSample[]): Anatomy {
  const statuses: Record<string, number> = {};
  for (const run of runs) statuses[run.status] = (statuses[run.status] ?? 0) + 1;
  const timed = runs.flatMap((r) => (r.timings === null ? [] : [r.timings]));
  const layers =
    timed.length === 0
      ? null
      : (Object.fromEntries(TIMING_FIELDS.map((f) => [f, layerStats(timed.map((t) => t[f]))])) as Record<
          TimingField,
          LayerStats
        >);
  const provisions = runs.flatMap((r) => (r.provision === null ? [] : [r.provision]));
  const engines = runs.flatMap((r) => (r.engine === null ? [] : [r.engine]));
  return {
    runs: runs.length,
    succeeded: statuses.SUCCEEDED ?? 0,
    withTimings: timed.length,
    statuses,
    layers,
    provision:
      provisions.length === 0
        ? null
        : {
            bundleMs: layerStats(provisions.map((p) => p.bundleMs)),
            piecesMs: layerStats(provisions.map((p) => p.piecesMs)),
            engineMs: layerStats(provisions.map((p) => p.engineMs)),
          },
    segments: layers === null ? null : segmentsOf(layers),
    engines:
      engines.length === 0
        ? null
        : {
            distinct: new Set(engines.map((e) => e.pid)).size,
            preBootedShare: engines.filter((e) => e.preBooted).length / engines.length,
            freshShare: engines.filter((e) => e.jobsServed === 1).length / engines.length,
            maxJobsServed: Math.max(...engines.map((e) => e.jobsServed)),
          },
    pieceMissRuns: runs.filter((r) => (r.pieceMisses ?? 0) > 0).length,
  };
}

/** Splits the mean total into consecutive parts; clock differences can make a remainder dip below 0. */
export function segmentsOf(layers: Record<TimingField, LayerStats>): AnatomySegments {
  const m = (f: TimingField) => layers[f].mean;
  const inside = m('provisionMs') + m('bootMs') + m('runMs') + m('logPersistMs');
  return {
    queue: m('queueMs'),
    provision: m('provisionMs'),
    boot: m('bootMs'),
    run: m('runMs'),
    logPersist: m('logPersistMs'),
    workerOther: Math.max(0, m('workerBusyMs') - inside),
    afterWorker: Math.max(0, m('totalMs') - m('queueMs') - m('workerBusyMs')),
  };
}
