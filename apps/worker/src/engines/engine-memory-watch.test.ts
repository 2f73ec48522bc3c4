import { describe, expect, it } from 'vitest';
import { watchEngineMemory } from './engine-memory-watch.ts';

describe('watchEngineMemory', () => {
  it('reports the first sample past the limit, once, and stops sampling', async () => {
    const samples = [100, 200, 301, 400];
    const read: number[] = [];
    const exceeded = await new Promise<number>((resolve) => {
      watchEngineMemory({
        pid: 42,
        limitBytes: 300,
        intervalMs: 1,
        readRss: (pid) => {
          expect(pid).toBe(42);
          const sample = samples[read.length];
          if (sample !== undefined) read.push(sample);
          return sample;
        },
        onExceeded: resolve,
      });
    });
    expect(exceeded).toBe(301);
    expect(read).toEqual([100, 200, 301]);
  });

  it('reports nothing for a process it cannot read', async () => {
    let reads = 0;
    let reported = false;
    const stop = watchEngineMemory({
      pid: 1,
      limitBytes: 0,
      intervalMs: 1,
      readRss: () => {
        reads += 1;
        return undefined;
      },
      onExceeded: () => {
        reported = true;
      },
    });
    // Wait on sampling itself, not on a clock: three reads of a gone process report nothing.
    await new Promise<void>((resolve) => {
      const check = setInterval(() => {
        if (reads >= 3) {
          clearInterval(check);
          resolve();
        }
      }, 1);
    });
    stop();
    expect(reported).toBe(false);
  });
});
