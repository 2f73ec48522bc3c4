import { describe, expect, it } from 'vitest';
import { sampleRepeat, sampleReport } from '../test/sample-report.ts';
import { parseEventLoopDelay } from './app-event-loop.ts';
import { parseBenchArgs } from './args.ts';
import { fleetSection, largestFleetPerApp, perWorkerSpread } from './report-fleet.ts';
import type { ScenarioResult } from './result-types.ts';
import { fleetSuite, simScenario } from './scenarios.ts';

function simResult(apps: number, workers: number, reqPerSec: number, loopP99Ms: number): ScenarioResult {
  const scenario = simScenario(apps, workers, 200);
  const repeat = {
    ...sampleRepeat(0, reqPerSec, 0),
    appEventLoopDelay: { p99Ms: loopP99Ms, maxMs: loopP99Ms * 2 },
  };
  return {
    scenario,
    status: 'ok',
    warmup: null,
    idle: null,
    repeats: [repeat],
    summary: {
      ...(sampleReport().scenarios[0]?.summary as NonNullable<ScenarioResult['summary']>),
      reqPerSec: { median: reqPerSec, min: reqPerSec, max: reqPerSec, q1: reqPerSec, q3: reqPerSec, n: 1 },
      reqPerSecPerWorker: {
        median: reqPerSec / workers,
        min: reqPerSec / workers,
        max: reqPerSec / workers,
        q1: reqPerSec / workers,
        q3: reqPerSec / workers,
        n: 1,
      },
    },
  };
}

describe('the fleet report', () => {
  it('lays the 1:10 rows out like the reference, with the per-worker spread and the one-app wall', () => {
    const rows = [
      simResult(4, 40, 180, 5),
      simResult(8, 80, 360, 8),
      simResult(1, 40, 150, 30),
      simResult(1, 80, 250, 70),
    ];
    expect(perWorkerSpread(rows.slice(0, 2))).toMatchObject({ min: 4.5, max: 4.5, spread: 0 });
    expect(largestFleetPerApp(rows.slice(2))?.scenario.workers).toBe(40);
    const md = fleetSection({ ...sampleReport(), scenarios: rows }).join('\n');
    expect(md).toContain('### At 1:10, as the fleet grows');
    expect(md).toMatch(/\| 4 app · 40 workers \| 1:10 \| 180\.0 \| 4\.50 \|/);
    expect(md).toContain('a spread of 0.0 %');
    expect(md).toContain('one app served with its event loop p99 at or under 50 ms: 40 workers');
    expect(fleetSection(sampleReport())).toEqual([]);
  });

  it('reads the event-loop delay from prom-client default metrics', () => {
    const text = [
      '# HELP flowbox_app_nodejs_eventloop_lag_p99_seconds The 99th percentile of the recorded event loop delays.',
      'flowbox_app_nodejs_eventloop_lag_p99_seconds 0.012',
      'flowbox_app_nodejs_eventloop_lag_max_seconds 0.0456',
    ].join('\n');
    expect(parseEventLoopDelay(text)).toEqual({ p99Ms: 12, maxMs: 45.6 });
    expect(parseEventLoopDelay('nothing here')).toBeNull();
  });

  it('runs the fleet suite with --suite fleet: 40 to 160 workers at 1:10, the 1:20 pairs, one app, idle', () => {
    const paths = { cwd: '/repo', defaultOutDir: '/repo/out' };
    expect(parseBenchArgs(['--suite', 'fleet'], {}, paths).suite).toBe('fleet');
    expect(parseBenchArgs(['--quick'], {}, paths).suite).toBe('quick');
    expect(() => parseBenchArgs(['--suite', 'nope'], {}, paths)).toThrow(/--suite/);
    expect(() => parseBenchArgs(['--quick', '--suite', 'fleet'], {}, paths)).toThrow(/two suites/);
    const names = fleetSuite().map((s) => s.name);
    expect(names).toEqual(
      expect.arrayContaining([
        'sim-4a40w-t200',
        'sim-16a160w-t200',
        'sim-2a40w-t200',
        'sim-4a80w-t200',
        'sim-1a1000w-t200-c10-i60',
      ]),
    );
  });
});
