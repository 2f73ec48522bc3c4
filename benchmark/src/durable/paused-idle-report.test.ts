import { describe, expect, it } from 'vitest';
import { PROCESS_KINDS, type ProcessKind } from '../proc-stats.ts';
import type { CpuWindow } from '../standalone/cpu-window.ts';
import { FIXTURE_HEAD } from '../standalone/report-fixture.ts';
import { parsePausedIdleArgs } from './paused-idle-args.ts';
import {
  type IdleWindow,
  type PausedIdleReport,
  renderPausedIdleReport,
  reportBaseName,
} from './paused-idle-report.ts';

function window(seconds: number, app: number): CpuWindow {
  const cores = Object.fromEntries(PROCESS_KINDS.map((kind) => [kind, 0])) as Record<ProcessKind, number>;
  cores.app = app;
  cores.postgres = 0.01;
  const cpuSeconds = Object.fromEntries(PROCESS_KINDS.map((kind) => [kind, cores[kind] * seconds])) as Record<
    ProcessKind,
    number
  >;
  return { seconds, cores, cpuSeconds };
}

function idle(paused: number, app: number): IdleWindow {
  return {
    paused,
    whole: window(60, app),
    parts: [window(30, app), window(30, app)],
    redisCommandsPerS: 20,
    postgresStatementsPerS: 1,
    redisUsedMemoryMb: 2,
  };
}

function report(windows: IdleWindow[]): PausedIdleReport {
  return {
    schema: 1,
    startedAt: '2026-11-29T12:00:00.000Z',
    finishedAt: '2026-11-29T12:10:00.000Z',
    commandLine: 'pnpm bench:paused-idle',
    ...FIXTURE_HEAD,
    options: {
      runs: 10_000,
      idleS: 60,
      parts: 2,
      settleS: 20,
      apps: 1,
      workers: 2,
      concurrency: 32,
      build: true,
    },
    createS: 300,
    waits: { count: 10_000, earliestDue: '2026-11-29T13:00:00.000Z' },
    resumesDelayed: 10_000,
    windows,
    aborted: false,
  };
}

describe('the paused-runs idle report', () => {
  it('names the file by date, host and runs', () => {
    expect(reportBaseName(report([]))).toBe('2026-11-29-vm-paused-idle-10000');
  });

  it('meets the target within 10 % of the stack with none paused, and misses it past', () => {
    expect(renderPausedIdleReport(report([idle(0, 0.02), idle(10_000, 0.021)]))).toMatch(
      /\| 3\.00 % \| 3\.10 % \| 1\.03× \| met \|/,
    );
    expect(renderPausedIdleReport(report([idle(0, 0.02), idle(10_000, 0.04)]))).toMatch(
      /1\.67× \| \*\*missed\*\* \|/,
    );
  });

  it('says so when a window is missing', () => {
    expect(renderPausedIdleReport(report([idle(0, 0.02)]))).toContain(
      'Stopped before both windows were measured.',
    );
  });

  it('reads its options with their defaults', () => {
    expect(parsePausedIdleArgs([], { cwd: '/r', defaultOutDir: '/r/out' })).toMatchObject({
      runs: 10_000,
      idleS: 60,
      workers: 2,
      outDir: '/r/out',
    });
    expect(() => parsePausedIdleArgs(['--runs', '0'], { cwd: '/r', defaultOutDir: '/r/out' })).toThrow(
      /--runs/,
    );
  });
});
