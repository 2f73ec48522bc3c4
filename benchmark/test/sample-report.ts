import { summarizeScenario } from '../src/aggregate.ts';
import { computeAnatomy } from '../src/anatomy.ts';
import type { BenchReport, RepeatResult, ScenarioResult } from '../src/result-types.ts';
import type { RunSample } from '../src/runs-api.ts';
import { type Mode, scenario } from '../src/scenarios.ts';

/** A made-up but consistent report: what the report renderers are tested against. */
export function sampleRepeat(index: number, reqPerSec: number, bootMs: number): RepeatResult {
  const runs: RunSample[] = Array.from({ length: 20 }, (_, i) => ({
    id: `${index}-${i}`,
    status: 'SUCCEEDED',
    createdAt: new Date(i).toISOString(),
    timings: {
      queueMs: 1,
      provisionMs: 0.5,
      bootMs,
      runMs: 4 + (i % 3),
      logPersistMs: 1.5,
      workerBusyMs: 7 + bootMs + (i % 3),
      totalMs: 9 + bootMs + (i % 3),
    },
    provision: { bundleMs: 0.2, piecesMs: 0.2, engineMs: 0.1 },
    engine: { pid: 1000 + (bootMs > 0 ? i : 0), jobsServed: bootMs > 0 ? 1 : i + 1, preBooted: bootMs === 0 },
    pieceMisses: 0,
    workerId: 'worker-0',
  }));
  const requests = 20;
  return {
    index,
    startedAt: '2026-01-02T03:04:05.000Z',
    windowS: 2.2,
    load: {
      connections: 1,
      durationS: 2,
      responses: 20,
      ok: 20,
      non2xx: 0,
      errors: 0,
      timeouts: 0,
      statusCodes: { 200: 20 },
      reqPerSec,
      latencyMs: { mean: 10 + bootMs, p50: 9 + bootMs, p95: 14 + bootMs, p99: 18 + bootMs, max: 25 + bootMs },
    },
    settled: true,
    requests,
    processes: {
      app: {
        cpuSeconds: 0.5,
        cores: 0.23,
        cpuMsPerRequest: 25,
        peakRssMb: 120,
        peakTotalRssMb: 120,
        processes: 1,
      },
      worker: {
        cpuSeconds: 0.2,
        cores: 0.09,
        cpuMsPerRequest: 10,
        peakRssMb: 80,
        peakTotalRssMb: 80,
        processes: 1,
      },
      engine: {
        cpuSeconds: 0.3,
        cores: 0.14,
        cpuMsPerRequest: 15,
        peakRssMb: 60,
        peakTotalRssMb: 60,
        processes: 1,
      },
      postgres: {
        cpuSeconds: 0.1,
        cores: 0.05,
        cpuMsPerRequest: 5,
        peakRssMb: 30,
        peakTotalRssMb: 90,
        processes: 8,
      },
    },
    redis: {
      commands: 52 * requests,
      commandsProcessed: 52 * requests,
      roundTrips: 6 * requests,
      perCommand: { evalsha: 4 * requests, hset: 10 * requests, 'client|setname': 0 },
      commandsPerRequest: 52,
      roundTripsPerRequest: 6,
    },
    postgres: {
      statements: 5 * requests,
      transactionControl: 0,
      transactions: 5 * requests,
      top: [{ query: 'UPDATE runs SET status = $2 WHERE id = $1 AND x <> $3 | y', calls: 2 * requests }],
      statementsPerRequest: 5,
      transactionsPerRequest: 5,
    },
    anatomy: computeAnatomy(runs),
    logLines: { warn: 0, error: 0 },
  };
}

export function sampleScenario(
  mode: Mode,
  apps: number,
  workers: number,
  connections: number,
  base: number,
): ScenarioResult {
  const s = scenario(mode, apps, workers, connections);
  const bootMs = mode === 'cold' ? 30 : 0;
  const repeats = [0, 1, 2].map((i) => sampleRepeat(i, base * workers + i, bootMs));
  return {
    scenario: s,
    status: 'ok',
    warmup: { requests: 10, ok: 10, durationS: 0.1 },
    idle: {
      seconds: 2,
      redisCommandsPerSecond: 1.5,
      redisRoundTripsPerSecond: 0.5,
      postgresStatementsPerSecond: 0,
    },
    repeats,
    summary: summarizeScenario(s, repeats),
  };
}

export function sampleReport(): BenchReport {
  return {
    schema: 1,
    startedAt: '2026-01-02T03:04:05.000Z',
    finishedAt: '2026-01-02T03:14:05.000Z',
    commandLine: 'pnpm bench --quick',
    suite: 'quick',
    settings: { durationS: 2, repeats: 3, warmupPerWorker: 10, connections: null },
    target: null,
    machine: {
      hostname: 'bench-<host>',
      cpuModel: 'Test CPU @ 3.0GHz',
      cores: 2,
      memoryGb: 24,
      kernel: '6.1.0',
      loadAverageAtStart: [0.1, 0.2, 0.3],
      node: 'v24.0.0',
      versions: { autocannon: '9.0.0' },
    },
    services: {
      postgres: 'PostgreSQL 15',
      redis: 'Redis 7.0.15',
      s3: 'versitygw',
      measured: ['client latency and throughput (autocannon)'],
      notMeasured: [],
    },
    scenarios: [
      sampleScenario('warm', 1, 1, 1, 150),
      sampleScenario('warm', 1, 2, 2, 120),
      sampleScenario('warm', 1, 2, 8, 125),
      sampleScenario('cold-prewarm', 1, 1, 1, 40),
      sampleScenario('cold', 1, 1, 1, 20),
      {
        scenario: scenario('cold', 1, 2),
        status: 'failed',
        error: 'app-0 exited\nstack',
        warmup: null,
        idle: null,
        repeats: [],
        summary: null,
      },
    ],
    aborted: false,
  };
}
