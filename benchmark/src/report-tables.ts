import { fmt, fmtMedian, fmtSpread } from './format.ts';
import { PROCESS_KINDS } from './proc-stats.ts';
import type { RepeatResult, ScenarioResult } from './result-types.ts';

/** The rows shared by the terminal summary and the Markdown report. */
export const SUMMARY_HEADERS = [
  'scenario',
  'req/s',
  'req/s/worker',
  'p50 ms',
  'p95 ms',
  'p99 ms',
  'max ms',
  'non-2xx',
  'errors',
  'redis cmd/req',
  'redis RT/req',
  'pg stmt/req',
  'busy ms',
  'boot ms',
] as const;

export function summaryRow(r: ScenarioResult): string[] {
  const s = r.summary;
  if (s === null)
    return [r.scenario.name, r.status === 'aborted' ? 'aborted' : 'failed', ...Array(12).fill('')];
  return [
    r.scenario.name,
    fmtSpread(s.reqPerSec),
    fmtMedian(s.reqPerSecPerWorker, 2),
    fmtMedian(s.latency.p50),
    fmtMedian(s.latency.p95),
    fmtMedian(s.latency.p99),
    fmtMedian(s.latency.max),
    String(s.totals.non2xx),
    String(s.totals.errors),
    fmtMedian(s.redisCommandsPerRequest),
    fmtMedian(s.redisRoundTripsPerRequest),
    fmtMedian(s.postgresStatementsPerRequest),
    fmtMedian(s.anatomy?.workerBusyMs?.mean),
    fmtMedian(s.anatomy?.bootMs?.mean),
  ];
}

export const COST_HEADERS = [
  'scenario',
  'requests counted',
  'redis commands',
  'redis round trips',
  'redis total_commands_processed',
  'pg statements',
  'of which BEGIN/COMMIT',
  'pg transactions (approx.)',
  'CPU ms (all kinds)',
  'idle redis cmd/s',
  'idle pg stmt/s',
];

export function costRow(r: ScenarioResult): string[] {
  const s = r.summary;
  const median = (get: (x: RepeatResult) => number | null | undefined) => {
    const values = r.repeats.map(get).filter((v): v is number => typeof v === 'number' && Number.isFinite(v));
    values.sort((a, b) => a - b);
    return values.length === 0 ? null : (values[Math.floor((values.length - 1) / 2)] ?? null);
  };
  const perRequest = (get: (x: RepeatResult) => number | null | undefined) =>
    median((x) => {
      const value = get(x);
      return value === null || value === undefined || x.requests === 0 ? null : value / x.requests;
    });
  const cpuMs = median((x) => {
    if (x.processes === null || x.requests === 0) return null;
    const total = PROCESS_KINDS.reduce((sum, k) => sum + (x.processes?.[k]?.cpuSeconds ?? 0), 0);
    return (total * 1000) / x.requests;
  });
  return [
    r.scenario.name,
    fmt(
      median((x) => x.requests),
      0,
    ),
    fmtSpread(s?.redisCommandsPerRequest),
    fmtSpread(s?.redisRoundTripsPerRequest),
    fmt(perRequest((x) => x.redis?.commandsProcessed)),
    fmtSpread(s?.postgresStatementsPerRequest),
    fmt(perRequest((x) => x.postgres?.transactionControl)),
    fmtSpread(s?.postgresTransactionsPerRequest),
    fmt(cpuMs),
    fmt(r.idle?.redisCommandsPerSecond),
    fmt(r.idle?.postgresStatementsPerSecond),
  ];
}
