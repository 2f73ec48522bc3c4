import { describe, expect, it } from 'vitest';
import { soakRuns } from '../../test/support/run-soak.ts';
import { DEFAULT_ISOLATE_MAX_RUNS } from './run-isolation.ts';

/**
 * Many runs, each in a fresh context of a reused isolate, in one engine: none fails and nothing
 * is kept per run (heap flat after a forced GC; RSS reported). The full 10,000 runs are `pnpm test:soak`
 * (apps/dev/soak/isolate-engine.soak.ts); this keeps CI's share small.
 */
describe('isolate runs in one engine', () => {
  it('500 runs of the seeded flow leave the heap where it was once warm', async () => {
    const report = await soakRuns({ runs: 500, isolation: 'isolate' });
    console.info(JSON.stringify(report));
    expect(report.failed).toBe(0);
    // One isolate per ISOLATE_MAX_RUNS runs (and one made ahead), not one per run.
    expect(report.isolates).toBeLessThanOrEqual(Math.ceil(500 / DEFAULT_ISOLATE_MAX_RUNS) + 1);
    // A per-run leak of the run's objects would show here (an isolate's own heap is not in it).
    expect(report.heapUsedMb.end - report.heapUsedMb.warm).toBeLessThan(8);
    // A leaked isolate or context costs MBs of RSS each: 450 of them could not hide in this.
    expect(report.rssMb.end - report.rssMb.warm).toBeLessThan(150);
  }, 300_000);
});
