import { describe, expect, it } from 'vitest';
import { parseRun } from './runs-api.ts';

describe('parseRun', () => {
  it('keeps what the benchmark needs from a run of GET /v1/runs', () => {
    const run = parseRun({
      id: 'r1',
      status: 'SUCCEEDED',
      createdAt: '2026-01-01T00:00:00.000Z',
      workerId: 'worker-0',
      timings: {
        queueMs: 1,
        provisionMs: 2,
        provision: { bundleMs: 1, piecesMs: 0.5, engineMs: 0.5 },
        bootMs: 0,
        runMs: 4,
        logPersistMs: 1,
        workerBusyMs: 8,
        totalMs: 10,
      },
      provisioning: {
        bundle: 'hit',
        pieceHits: 2,
        pieceMisses: 0,
        engine: { pid: 5, jobsServed: 3, preBooted: true },
      },
    });
    expect(run).toEqual({
      id: 'r1',
      status: 'SUCCEEDED',
      createdAt: '2026-01-01T00:00:00.000Z',
      timings: {
        queueMs: 1,
        provisionMs: 2,
        bootMs: 0,
        runMs: 4,
        logPersistMs: 1,
        workerBusyMs: 8,
        totalMs: 10,
      },
      provision: { bundleMs: 1, piecesMs: 0.5, engineMs: 0.5 },
      engine: { pid: 5, jobsServed: 3, preBooted: true },
      pieceMisses: 0,
      workerId: 'worker-0',
    });
  });

  it('drops timings that are incomplete and runs that are not runs', () => {
    expect(parseRun({ id: 'r2', status: 'FAILED', timings: { queueMs: 1 } })?.timings).toBeNull();
    expect(parseRun({ id: 3 })).toBeNull();
    expect(parseRun(null)).toBeNull();
  });
});
