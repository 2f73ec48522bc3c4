import { describe, expect, it } from 'vitest';
import type { LoadResult } from './load-result.ts';
import { durableSection, resumeCpuMsPerRun } from './report-durable.ts';
import type { KindUsage, RepeatResult, ScenarioResult } from './result-types.ts';
import { parseScenarioName } from './scenarios.ts';

function usage(cpuSeconds: number): KindUsage {
  return { cpuSeconds, cores: 0, cpuMsPerRequest: null, peakRssMb: null, peakTotalRssMb: null, processes: 1 };
}

function load(statusCodes: Record<string, number>, maxMs: number): LoadResult {
  const ok = Object.entries(statusCodes).reduce(
    (n, [code, count]) => n + (code.startsWith('2') ? count : 0),
    0,
  );
  const responses = Object.values(statusCodes).reduce((n, count) => n + count, 0);
  return {
    connections: 500,
    durationS: 1,
    responses,
    ok,
    non2xx: responses - ok,
    errors: 0,
    timeouts: 0,
    statusCodes,
    reqPerSec: ok,
    latencyMs: { mean: maxMs / 2, p50: maxMs / 2, p95: maxMs, p99: maxMs, max: maxMs },
  };
}

function repeat(
  index: number,
  requests: number,
  cpu: { engine: number; worker: number; app: number },
  l: LoadResult,
): RepeatResult {
  return {
    index,
    startedAt: '2026-11-29T12:00:00.000Z',
    windowS: 10,
    load: l,
    settled: true,
    requests,
    processes: {
      engine: usage(cpu.engine),
      worker: usage(cpu.worker),
      app: usage(cpu.app),
      postgres: usage(5),
    },
    redis: null,
    postgres: null,
    anatomy: null,
    logLines: { warn: 0, error: 0 },
  };
}

function result(name: string, repeats: RepeatResult[], idleCores = 0): ScenarioResult {
  return {
    scenario: parseScenarioName(name),
    status: 'ok',
    warmup: null,
    idle: {
      seconds: 2,
      redisCommandsPerSecond: null,
      redisRoundTripsPerSecond: null,
      postgresStatementsPerSecond: null,
      cores: { app: idleCores },
    },
    repeats,
    summary: null,
  };
}

describe('the durable runs section', () => {
  it('sums engine, worker and app CPU per run, and takes their idle rates off for the net figure', () => {
    const r = repeat(0, 100, { engine: 0.3, worker: 0.1, app: 0.2 }, load({ 200: 100 }, 50));
    expect(resumeCpuMsPerRun(r, null, false)).toBeCloseTo(6);
    // 0.01 cores of app idle over the 10 s window: 0.1 s less.
    expect(resumeCpuMsPerRun(r, result('nodelay-1a1w-c64-r20', [], 0.01).idle, true)).toBeCloseTo(5);
  });

  it('gives a pause burst its answers by status and says whether all were 200 within 10 s', () => {
    const lines = durableSection({
      scenarios: [
        result('pause500-1a1w', [
          repeat(0, 500, { engine: 1, worker: 1, app: 1 }, load({ 200: 500 }, 9_100)),
          repeat(1, 490, { engine: 1, worker: 1, app: 1 }, load({ 200: 490, 504: 10 }, 9_900)),
        ]),
      ],
    }).join('\n');
    expect(lines).toContain('| pause500-1a1w | 1 | 500 | 500× 200 | 0 / 0 | 4,550 | 9,100 | yes |');
    expect(lines).toContain(
      '| pause500-1a1w | 2 | 500 | 490× 200, 10× 504 | 0 / 0 | 4,950 | 9,900 | **no** |',
    );
  });

  it('pairs delay with its nodelay twin and gives the ratio against the 1.6× target', () => {
    const lines = durableSection({
      scenarios: [
        result('delay-1a1w-c64-r20', [
          repeat(0, 200, { engine: 0.8, worker: 0.4, app: 0.8 }, load({ 200: 200 }, 1200)),
        ]),
        result('nodelay-1a1w-c64-r20', [
          repeat(0, 200, { engine: 0.6, worker: 0.2, app: 0.6 }, load({ 200: 200 }, 20)),
        ]),
      ],
    }).join('\n');
    expect(lines).toContain('| delay-1a1w-c64-r20 / nodelay-1a1w-c64-r20 | 10.00 | 7.00 | 1.43× |');
    expect(lines).toMatch(/1\.43× \| yes \|$/m);
  });

  it('adds nothing when no durable scenario ran', () => {
    expect(durableSection({ scenarios: [result('warm-1a1w-c1', [])] })).toEqual([]);
  });
});
