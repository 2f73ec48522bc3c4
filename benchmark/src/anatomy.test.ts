import { describe, expect, it } from 'vitest';
import { computeAnatomy, SEGMENT_NAMES } from './anatomy.ts';
import type { RunSample } from './runs-api.ts';

function run(
  id: number,
  t: Partial<NonNullable<RunSample['timings']>> | null,
  extra: Partial<RunSample> = {},
): RunSample {
  return {
    id: `run-${id}`,
    status: 'SUCCEEDED',
    createdAt: new Date(id).toISOString(),
    timings:
      t === null
        ? null
        : {
            queueMs: 1,
            provisionMs: 1,
            bootMs: 0,
            runMs: 5,
            logPersistMs: 2,
            workerBusyMs: 9,
            totalMs: 12,
            ...t,
          },
    provision: { bundleMs: 0.5, piecesMs: 0.25, engineMs: 0.25 },
    engine: { pid: 100, jobsServed: id + 1, preBooted: true },
    pieceMisses: 0,
    workerId: 'worker-0',
    ...extra,
  };
}

describe('computeAnatomy', () => {
  it('aggregates every layer and splits the mean total into parts that add up', () => {
    const runs = [
      run(0, { runMs: 4, totalMs: 10 }),
      run(1, { runMs: 6, totalMs: 14 }),
      run(2, null, { status: 'FAILED' }),
    ];
    const anatomy = computeAnatomy(runs);
    expect(anatomy.runs).toBe(3);
    expect(anatomy.succeeded).toBe(2);
    expect(anatomy.withTimings).toBe(2);
    expect(anatomy.statuses).toEqual({ SUCCEEDED: 2, FAILED: 1 });
    expect(anatomy.layers?.runMs).toEqual({ mean: 5, p50: 5, p95: 5.9 });
    const segments = anatomy.segments;
    expect(segments).not.toBeNull();
    const sum = SEGMENT_NAMES.reduce((total, name) => total + (segments?.[name] ?? 0), 0);
    expect(sum).toBeCloseTo(anatomy.layers?.totalMs.mean ?? 0);
    // busy 9 = provision 1 + boot 0 + run 5 + log 2 + other 1; total 12 = queue 1 + busy 9 + after 2.
    expect(segments).toMatchObject({ workerOther: 1, afterWorker: 2 });
  });

  it('tells fresh engines from reused ones', () => {
    const cold = [0, 1, 2, 3].map((i) =>
      run(i, {}, { engine: { pid: 200 + i, jobsServed: 1, preBooted: i % 2 === 0 } }),
    );
    expect(computeAnatomy(cold).engines).toEqual({
      distinct: 4,
      preBootedShare: 0.5,
      freshShare: 1,
      maxJobsServed: 1,
    });
    const warm = [0, 1, 2].map((i) => run(i, {}));
    expect(computeAnatomy(warm).engines).toMatchObject({ distinct: 1, freshShare: 1 / 3, maxJobsServed: 3 });
  });

  it('has no layers without timings', () => {
    const anatomy = computeAnatomy([run(0, null)]);
    expect(anatomy.layers).toBeNull();
    expect(anatomy.segments).toBeNull();
  });
});
