import { describe, expect, it } from 'vitest';
import { soakRuns } from '../../engine/test/support/run-soak.ts';

const RUNS = 10_000;

// 10,000 runs of the seeded flow in one engine (in-process, not through the whole stack), each
// in a fresh context of an isolate that serves ISOLATE_MAX_RUNS runs (the default): engine memory
// must stay flat, heap and RSS at the end within 10 % of where they were once warm (run 1,000).
// The shared mode beside it is the control and the CPU reference.
describe('10,000 isolate runs in one engine', () => {
  it('keeps heap and RSS flat', async () => {
    const isolate = await soakRuns({ runs: RUNS, isolation: 'isolate' });
    const shared = await soakRuns({ runs: RUNS, isolation: 'shared' });
    console.info(JSON.stringify({ isolate, shared }));
    expect(isolate.failed).toBe(0);
    // Contexts were reused: one isolate per ISOLATE_MAX_RUNS runs, not one per run.
    expect(isolate.isolates).toBeLessThan(RUNS / 10);
    expect(isolate.heapUsedMb.end).toBeLessThanOrEqual(isolate.heapUsedMb.warm * 1.1);
    expect(isolate.rssMb.end).toBeLessThanOrEqual(isolate.rssMb.warm * 1.1);
  });
});
