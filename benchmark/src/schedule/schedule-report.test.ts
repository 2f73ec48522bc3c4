import { describe, expect, it } from 'vitest';
import { PROCESS_KINDS, type ProcessKind } from '../proc-stats.ts';
import { type CpuWindow, sharedCores } from '../standalone/cpu-window.ts';
import { FIXTURE_HEAD } from '../standalone/report-fixture.ts';
import { parseScheduleArgs } from './schedule-args.ts';
import { renderScheduleReport, reportBaseName, type ScheduleReport } from './schedule-report.ts';
import { lagSummary } from './tick-stats.ts';

function window(seconds: number, cores: Partial<Record<ProcessKind, number>>): CpuWindow {
  const all = Object.fromEntries(PROCESS_KINDS.map((kind) => [kind, cores[kind] ?? 0])) as Record<
    ProcessKind,
    number
  >;
  const cpuSeconds = Object.fromEntries(PROCESS_KINDS.map((kind) => [kind, all[kind] * seconds])) as Record<
    ProcessKind,
    number
  >;
  return { seconds, cores: all, cpuSeconds };
}

function report(betweenApp: number | null, p99: number): ScheduleReport {
  return {
    schema: 1,
    startedAt: '2026-11-29T12:00:00.000Z',
    finishedAt: '2026-11-29T12:06:00.000Z',
    commandLine: 'pnpm bench:schedule',
    ...FIXTURE_HEAD,
    options: {
      flows: 10_000,
      everyS: 60,
      ticks: 1,
      warmupTicks: 1,
      apps: 1,
      workers: 0,
      seedConcurrency: 4,
      build: true,
    },
    seedS: 90,
    ticks: [
      {
        record: {
          scheduledAt: '2026-11-29T12:03:00.000Z',
          outcomes: { fired: 10_000 },
          created: { n: 10_000, p50: 300, p99: p99, max: p99 + 10 },
          started: null,
        },
        burstS: betweenApp === null ? null : 2,
        interval: window(59.8, { app: 0.1, postgres: 0.1 }),
        between: betweenApp === null ? null : window(57.8, { app: betweenApp, redis: 0.002, postgres: 0.01 }),
        betweenRedisCommandsPerS: 30,
        betweenPostgresStatementsPerS: 2,
      },
    ],
    aborted: false,
  };
}

describe('the schedule report', () => {
  it('names the file by date, host, flows and interval', () => {
    expect(reportBaseName(report(0.01, 500))).toBe('2026-11-29-vm-schedules-10000x60s');
  });

  it('gives both targets met when the tick lag and the idle CPU are under them', () => {
    const md = renderScheduleReport(report(0.01, 500));
    expect(md).toContain(
      "| a tick's runs created within 1 s of its time, p99 | 500 ms (worst tick's p99) | met |",
    );
    expect(md).toMatch(/between ticks, under 5 % of one core \| 2\.2 % \(worst tick\)[^|]*\| met \|/);
  });

  it('says missed past a target, and that a tick whose work took the interval left no window', () => {
    expect(renderScheduleReport(report(0.08, 1_500))).toContain("1,500 ms (worst tick's p99) | **missed** |");
    expect(renderScheduleReport(report(null, 500))).toContain(
      "no window: the ticks' work took every interval",
    );
  });

  it('sums the apps, Redis and Postgres only', () => {
    expect(sharedCores(window(1, { app: 0.01, redis: 0.02, postgres: 0.03, worker: 1 }))).toBeCloseTo(0.06);
  });
});

describe('lagSummary', () => {
  it('gives percentiles and the max of what it is given, none of nothing', () => {
    expect(lagSummary([300, 100, 200])).toEqual({ n: 3, p50: 200, p99: 298, max: 300 });
    expect(lagSummary([])).toBeNull();
  });
});

describe('parseScheduleArgs', () => {
  const defaults = { cwd: '/repo', defaultOutDir: '/repo/benchmark/results' };
  it('defaults to 10,000 flows every minute, 5 ticks, one app and no workers', () => {
    expect(parseScheduleArgs([], defaults)).toMatchObject({
      flows: 10_000,
      everyS: 60,
      ticks: 5,
      warmupTicks: 1,
      apps: 1,
      workers: 0,
      outDir: '/repo/benchmark/results',
      build: true,
    });
  });

  it('refuses a value out of range, naming the option', () => {
    expect(() => parseScheduleArgs(['--every', '0'], defaults)).toThrow(
      /--every must be a whole number from 1/,
    );
    expect(() => parseScheduleArgs(['--flows', 'many'], defaults)).toThrow(/--flows/);
  });
});
