import { type AnatomySegments, SEGMENT_NAMES } from './anatomy.ts';
import { PROCESS_KINDS, type ProcessKind } from './proc-stats.ts';
import type { KindSummary, RepeatResult, ScenarioSummary } from './result-types.ts';
import { TIMING_FIELDS, type TimingField } from './runs-api.ts';
import type { Scenario } from './scenarios.ts';
import { summarize } from './stats.ts';

/** Folds a scenario's repeats into medians with their spread (min/max and IQR). */
export function summarizeScenario(
  scenario: Scenario,
  repeats: readonly RepeatResult[],
): ScenarioSummary | null {
  if (repeats.length === 0) return null;
  const of = (get: (r: RepeatResult) => number | null | undefined) => summarize(repeats.map(get));
  const sum = (get: (r: RepeatResult) => number) => repeats.reduce((total, r) => total + get(r), 0);
  return {
    reqPerSec: of((r) => r.load.reqPerSec),
    reqPerSecPerWorker: of((r) => r.load.reqPerSec / scenario.workers),
    latency: {
      mean: of((r) => r.load.latencyMs?.mean),
      p50: of((r) => r.load.latencyMs?.p50),
      p95: of((r) => r.load.latencyMs?.p95),
      p99: of((r) => r.load.latencyMs?.p99),
      max: of((r) => r.load.latencyMs?.max),
    },
    totals: {
      responses: sum((r) => r.load.responses),
      ok: sum((r) => r.load.ok),
      non2xx: sum((r) => r.load.non2xx),
      errors: sum((r) => r.load.errors),
      timeouts: sum((r) => r.load.timeouts),
    },
    redisCommandsPerRequest: of((r) => r.redis?.commandsPerRequest),
    redisRoundTripsPerRequest: of((r) => r.redis?.roundTripsPerRequest),
    postgresStatementsPerRequest: of((r) => r.postgres?.statementsPerRequest),
    postgresTransactionsPerRequest: of((r) => r.postgres?.transactionsPerRequest),
    anatomy: anatomySummary(repeats),
    segments: segmentMedians(repeats),
    processes: processSummary(repeats),
    engines: repeats.some((r) => r.anatomy?.engines)
      ? {
          preBootedShare: of((r) => r.anatomy?.engines?.preBootedShare)?.median ?? null,
          freshShare: of((r) => r.anatomy?.engines?.freshShare)?.median ?? null,
        }
      : null,
  };
}

function anatomySummary(repeats: readonly RepeatResult[]): ScenarioSummary['anatomy'] {
  if (!repeats.some((r) => r.anatomy?.layers)) return null;
  const out: NonNullable<ScenarioSummary['anatomy']> = {};
  for (const field of TIMING_FIELDS as readonly TimingField[]) {
    out[field] = {
      mean: summarize(repeats.map((r) => r.anatomy?.layers?.[field].mean)),
      p50: summarize(repeats.map((r) => r.anatomy?.layers?.[field].p50)),
    };
  }
  return out;
}

function segmentMedians(repeats: readonly RepeatResult[]): AnatomySegments | null {
  const withSegments = repeats.flatMap((r) => (r.anatomy?.segments ? [r.anatomy.segments] : []));
  if (withSegments.length === 0) return null;
  const entries = SEGMENT_NAMES.map((name) => [
    name,
    summarize(withSegments.map((s) => s[name]))?.median ?? 0,
  ]);
  return Object.fromEntries(entries) as AnatomySegments;
}

function processSummary(repeats: readonly RepeatResult[]): Partial<Record<ProcessKind, KindSummary>> {
  const out: Partial<Record<ProcessKind, KindSummary>> = {};
  for (const kind of PROCESS_KINDS) {
    const usages = repeats.flatMap((r) => {
      const usage = r.processes?.[kind];
      return usage === undefined ? [] : [usage];
    });
    if (usages.length === 0) continue;
    const max = (values: (number | null)[]) => {
      const finite = values.filter((v): v is number => v !== null && Number.isFinite(v));
      return finite.length === 0 ? null : Math.max(...finite);
    };
    out[kind] = {
      cpuSeconds: summarize(usages.map((u) => u.cpuSeconds)),
      cores: summarize(usages.map((u) => u.cores)),
      cpuMsPerRequest: summarize(usages.map((u) => u.cpuMsPerRequest)),
      peakRssMb: max(usages.map((u) => u.peakRssMb)),
      peakTotalRssMb: max(usages.map((u) => u.peakTotalRssMb)),
    };
  }
  return out;
}
