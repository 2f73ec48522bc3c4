import { describe, expect, it } from 'vitest';
import { buildWaterfall, niceScale } from '../inspector/src/waterfall.ts';

const step = (name: string, startedAt: number, durationMs: number, status = 'SUCCEEDED') => ({
  name,
  status,
  startedAt: new Date(Date.UTC(2026, 0, 1) + startedAt).toISOString(),
  durationMs,
});

describe("the inspector's waterfall", () => {
  it('lays the anatomy out in the order the worker spends it, steps inside the run', () => {
    const timings = {
      queueMs: 2,
      provisionMs: 6,
      provision: { bundleMs: 1, piecesMs: 4, engineMs: 1 },
      bootMs: 30,
      runMs: 10,
      logPersistMs: 3,
      workerBusyMs: 50,
      totalMs: 53,
    };
    const { rows, spanMs } = buildWaterfall(timings, [
      step('trigger', 100, 0.5),
      step('step_1', 101, 4, 'FAILED'),
    ]);
    const at = (label: string) => {
      const row = rows.find((r) => r.label === label);
      return row === undefined ? null : [row.startMs, row.durationMs, row.depth, row.kind];
    };
    expect(at('total')).toEqual([0, 53, 0, 'total']);
    expect(at('queue')).toEqual([0, 2, 0, 'queue']);
    expect(at('worker busy')).toEqual([2, 50, 0, 'worker']);
    expect(at('provision')).toEqual([2, 6, 1, 'provision']);
    expect(at('pieces')).toEqual([3, 4, 2, 'provision']);
    expect(at('boot')).toEqual([8, 30, 1, 'boot']);
    expect(at('run')).toEqual([38, 10, 1, 'run']);
    expect(at('log upload')).toEqual([48, 3, 1, 'log']);
    // Steps by their own clock, from the run's start: the second began 1 ms after the first.
    expect(at('trigger')).toEqual([38, 0.5, 2, 'step']);
    expect(at('step_1')).toEqual([39, 4, 2, 'step-failed']);
    expect(spanMs).toBe(53);
    // Steps are drawn under the run they belong to, before the log upload.
    expect(rows.map((r) => r.label).slice(-4)).toEqual(['run', 'trigger', 'step_1', 'log upload']);
  });

  it('shows the steps alone while no worker has reported the timings', () => {
    const { rows, spanMs } = buildWaterfall(null, [step('trigger', 0, 1), step('step_1', 5, 2)]);
    expect(rows.map((r) => [r.label, r.startMs, r.depth])).toEqual([
      ['trigger', 0, 0],
      ['step_1', 5, 0],
    ]);
    expect(spanMs).toBe(7);
  });

  it('labels a nested step by its path and leaves out the steps of branches not taken', () => {
    const { rows } = buildWaterfall(null, [
      step('trigger', 0, 1),
      { ...step('notify', 1, 1), path: 'route/big/notify' },
      { ...step('email', 0, 0, 'SKIPPED'), path: 'route/small/email' },
    ]);
    expect(rows.map((r) => [r.label, r.startMs, r.durationMs])).toEqual([
      ['trigger', 0, 1],
      ['route/big/notify', 1, 1],
    ]);
  });

  it('draws each loop iteration as a lane of its steps, iterations at once side by side', () => {
    // Offsets from the first step's start (the engine's clock).
    const { rows } = buildWaterfall(null, [
      { ...step('check', 2, 3), path: 'each[0]/check' },
      { ...step('check', 2, 4), path: 'each[1]/check' },
      { ...step('fee', 5, 2), path: 'each[0]/fee' },
      { ...step('fee', 6, 1, 'FAILED'), path: 'each[1]/fee' },
      { ...step('label', 9, 1, 'FAILED'), path: 'orders[0]/parts[1]/label' },
      { ...step('each', 2, 6), path: 'each' },
    ]);
    expect(rows.map((r) => [r.label, r.kind, r.startMs, r.durationMs, r.bars?.map((b) => b.label)])).toEqual([
      ['each[0]', 'lane', 0, 5, ['each[0]/check', 'each[0]/fee']],
      ['each[1]', 'lane lane-failed', 0, 5, ['each[1]/check', 'each[1]/fee']],
      ['orders[0]/parts[1]', 'lane lane-failed', 7, 1, ['orders[0]/parts[1]/label']],
      ['each', 'step', 0, 6, undefined],
    ]);
  });

  it('rounds a scale up to 1, 2 or 5 times a power of ten', () => {
    expect(niceScale(53)).toEqual({ max: 60, step: 20 });
    expect(niceScale(7)).toEqual({ max: 8, step: 2 });
    expect(niceScale(0)).toEqual({ max: 1, step: 0.25 });
  });
});
