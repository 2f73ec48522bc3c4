import { describe, expect, it } from 'vitest';
import { soakRuns } from '../../engine/test/support/run-soak.ts';

const RUNS = 10_000;

// Issue 29's soak: 10,000 runs of the seeded flow in one engine (in-process, not through the
// whole stack), each in a fresh isolate; engine memory must stay flat. The shared mode beside
// it is the control and the CPU reference.
describe('10,000 isolate runs in one engine', () => {
  it('keeps heap and RSS flat', async () => {
    const isolate = await soakRuns({ runs: RUNS, isolation: 'isolate' });
    const shared = await soakRuns({ runs: RUNS, isolation: 'shared' });
    console.info(JSON.stringify({ isolate, shared }));
    expect(isolate.failed).toBe(0);
    expect(isolate.heapUsedMb.end - isolate.heapUsedMb.warm).toBeLessThan(16);
    expect(isolate.rssMb.end - isolate.rssMb.warm).toBeLessThan(64);
  });
});
