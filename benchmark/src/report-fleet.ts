import { fmt, mdTable } from './format.ts';
import type { BenchReport, ScenarioResult } from './result-types.ts';

/** An app's event loop past this delay (p99) is the fleet's wall: its callers start to wait on it. */
export const EVENT_LOOP_WALL_MS = 50;

const cores = (r: ScenarioResult, kind: 'app' | 'redis' | 'postgres' | 's3' | 'sim') =>
  r.summary?.processes[kind]?.cores?.median ?? null;

const loopP99 = (r: ScenarioResult): number | null => {
  const values = r.repeats
    .map((x) => x.appEventLoopDelay?.p99Ms)
    .filter((v): v is number => typeof v === 'number')
    .sort((a, b) => a - b);
  return values.length === 0 ? null : (values[Math.floor((values.length - 1) / 2)] ?? null);
};

const FLEET_HEADERS = [
  'apps · workers',
  'ratio',
  'req/s',
  'req/s per worker',
  'p50 ms',
  'p99 ms',
  'apps, cores (per app)',
  'redis cores',
  'postgres cores',
  's3 cores',
  'simulator cores',
  'app loop p99 ms',
];

function fleetRow(r: ScenarioResult): string[] {
  const s = r.scenario;
  const apps = cores(r, 'app');
  return [
    `${s.apps} app · ${s.workers} workers`,
    `1:${fmt(s.workers / s.apps, 0)}`,
    fmt(r.summary?.reqPerSec?.median),
    fmt(r.summary?.reqPerSecPerWorker?.median, 2),
    fmt(r.summary?.latency.p50?.median),
    fmt(r.summary?.latency.p99?.median),
    apps === null ? '–' : `${apps.toFixed(2)} (${(apps / s.apps).toFixed(3)})`,
    fmt(cores(r, 'redis'), 3),
    fmt(cores(r, 'postgres'), 3),
    fmt(cores(r, 's3'), 3),
    fmt(cores(r, 'sim'), 3),
    fmt(loopP99(r)),
  ];
}

/** Spread of req/s per worker over the 1:10 rows: the reference calls its own "flat" (linear scaling). */
export function perWorkerSpread(
  rows: readonly ScenarioResult[],
): { min: number; max: number; spread: number } | null {
  const values = rows
    .map((r) => r.summary?.reqPerSecPerWorker?.median)
    .filter((v): v is number => typeof v === 'number' && v > 0);
  if (values.length < 2) return null;
  const min = Math.min(...values);
  const max = Math.max(...values);
  return { min, max, spread: (max - min) / max };
}

/** The largest single-app fleet whose app kept its event loop p99 at or under the wall. */
export function largestFleetPerApp(rows: readonly ScenarioResult[]): ScenarioResult | null {
  const under = rows.filter((r) => {
    const p99 = loopP99(r);
    return p99 !== null && p99 <= EVENT_LOOP_WALL_MS;
  });
  return under.sort((a, b) => b.scenario.workers - a.scenario.workers)[0] ?? null;
}

/** The Markdown section for simulated-fleet scenarios, laid out like the reference's tables. */
export function fleetSection(report: BenchReport): string[] {
  const sims = report.scenarios.filter((r) => r.scenario.mode === 'sim' && r.summary !== null);
  if (sims.length === 0) return [];
  const loaded = sims.filter((r) => r.scenario.idleS === undefined);
  const tenToOne = loaded.filter((r) => r.scenario.workers === r.scenario.apps * 10);
  const twentyToOne = loaded.filter((r) => r.scenario.workers === r.scenario.apps * 20);
  const oneApp = loaded
    .filter((r) => r.scenario.apps === 1)
    .sort((a, b) => a.scenario.workers - b.scenario.workers);
  const idle = sims.filter((r) => r.scenario.idleS !== undefined);
  const spread = perWorkerSpread(tenToOne);
  const largest = largestFleetPerApp(oneApp);
  const out: string[] = [
    '## Fleet (simulated workers)',
    '',
    "Real apps, Redis, Postgres and S3; the workers are simulated (benchmark/src/sim/): each speaks the real worker protocol (token, long-poll, the response callback with its run's engine token, the log upload through its presigned POST, the job result) and spends a fixed service time instead of running an engine. Many run in one process, counted as `simulator`. Cores are CPU seconds per second of the window, all processes of the kind together; the app column also gives the share per app.",
    '',
  ];
  if (tenToOne.length > 0) {
    out.push('### At 1:10, as the fleet grows', '', mdTable(FLEET_HEADERS, tenToOne.map(fleetRow)), '');
    if (spread !== null)
      out.push(
        `req/s per worker from ${spread.min.toFixed(2)} to ${spread.max.toFixed(2)}: a spread of ${(spread.spread * 100).toFixed(1)} % over these fleet sizes.`,
        '',
      );
  }
  if (twentyToOne.length > 0) {
    const pairs = twentyToOne.flatMap((wide) => {
      const narrow = tenToOne.find((r) => r.scenario.workers === wide.scenario.workers);
      return narrow === undefined ? [wide] : [wide, narrow];
    });
    out.push('### App:worker ratio, 1:20 against 1:10', '', mdTable(FLEET_HEADERS, pairs.map(fleetRow)), '');
  }
  if (oneApp.length > 0) {
    out.push(
      '### One app under a growing fleet',
      '',
      mdTable(FLEET_HEADERS, oneApp.map(fleetRow)),
      '',
      largest === null
        ? `No measured fleet kept one app's event loop p99 at or under ${EVENT_LOOP_WALL_MS} ms.`
        : `The largest fleet measured that one app served with its event loop p99 at or under ${EVENT_LOOP_WALL_MS} ms: ${largest.scenario.workers} workers (${fmt(largest.summary?.reqPerSec?.median)} req/s, loop p99 ${fmt(loopP99(largest))} ms).`,
      '',
    );
  }
  if (idle.length > 0) {
    out.push(
      '### Idle workers',
      '',
      mdTable(
        [
          'apps · workers',
          'idle s',
          'redis cmd/s per worker',
          'app core % per worker',
          'postgres stmt/s per worker',
          'redis cores',
          'app cores',
        ],
        idle.map((r) => {
          const w = r.scenario.workers;
          const i = r.idle;
          const appCores = i?.cores?.app;
          return [
            `${r.scenario.apps} app · ${w} workers`,
            fmt(i?.seconds, 0),
            fmt(i?.redisCommandsPerSecond == null ? null : i.redisCommandsPerSecond / w, 3),
            fmt(appCores === undefined ? null : (appCores / w) * 100, 4),
            fmt(i?.postgresStatementsPerSecond == null ? null : i.postgresStatementsPerSecond / w, 3),
            fmt(i?.cores?.redis, 3),
            fmt(appCores, 3),
          ];
        }),
      ),
      '',
      'Measured with every worker connected and long-polling and no request at all, after the warm-up.',
      '',
    );
  }
  return out;
}
