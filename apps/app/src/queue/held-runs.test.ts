import type { RunJobData } from '@flowbox/protocol';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { HELD_RUN_MAX_MS, HeldRuns } from './held-runs.ts';
import type { LeasedJob } from './leased-job.ts';

function lease(jobId: string, released: string[]): LeasedJob {
  return {
    jobId,
    data: { runId: jobId } as RunJobData,
    attempt: 1,
    complete: async () => null,
    fail: async () => null,
    release: async () => {
      released.push(jobId);
    },
    postpone: async () => {},
  };
}

describe('HeldRuns', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('serves by rank, then first come first, up to its bound', () => {
    const held = new HeldRuns({ max: 4, onSpillError: () => {} });
    const released: string[] = [];
    expect(held.add(lease('a2', released), 2)).toBe(true);
    expect(held.add(lease('b1', released), 1)).toBe(true);
    expect(held.add(lease('a3', released), 3)).toBe(true);
    expect(held.add(lease('c1', released), 1)).toBe(true);
    expect(held.add(lease('d1', released), 1)).toBe(false);
    expect(
      [held.take(), held.take(), held.take(), held.take(), held.take()].map((l) => l?.jobId ?? null),
    ).toEqual(['b1', 'c1', 'a2', 'a3', null]);
  });

  it('removes a held run by job id', () => {
    const held = new HeldRuns({ max: 4, onSpillError: () => {} });
    held.add(lease('a', []), 1);
    held.add(lease('b', []), 1);
    expect(held.remove('a')).toBe(true);
    expect(held.remove('a')).toBe(false);
    expect(held.take()?.jobId).toBe('b');
  });

  it('sends every held run to the queue, in order, once the oldest has waited its time', async () => {
    const held = new HeldRuns({ max: 8, onSpillError: () => {} });
    const released: string[] = [];
    held.add(lease('first', released), 1);
    await vi.advanceTimersByTimeAsync(HELD_RUN_MAX_MS / 2);
    held.add(lease('second', released), 2);
    held.add(lease('third', released), 1);
    // The first one taken: the next check counts from the oldest left.
    expect(held.take()?.jobId).toBe('first');
    await vi.advanceTimersByTimeAsync(HELD_RUN_MAX_MS / 2);
    expect(released).toEqual([]);
    await vi.advanceTimersByTimeAsync(HELD_RUN_MAX_MS / 2);
    expect(released).toEqual(['third', 'second']);
    expect(held.size).toBe(0);
  });

  it('hands out no run that waited its time, however late the timer: they all go to the queue', async () => {
    const held = new HeldRuns({ max: 8, maxMs: 200, onSpillError: () => {} });
    const released: string[] = [];
    held.add(lease('old', released), 1);
    held.add(lease('young', released), 1);
    // The clock moves past the bound while the timer has not fired (a stalled event loop).
    vi.spyOn(performance, 'now').mockReturnValue(performance.now() + 200);
    expect(held.take()).toBeNull();
    await vi.waitFor(() => expect(released).toEqual(['old', 'young']));
    vi.restoreAllMocks();
  });

  it('reports a failed add and goes on with the others', async () => {
    const errors: unknown[] = [];
    const held = new HeldRuns({ max: 8, onSpillError: (error) => errors.push(error) });
    const released: string[] = [];
    held.add({ ...lease('bad', released), release: () => Promise.reject(new Error('down')) }, 1);
    held.add(lease('good', released), 1);
    await held.spill();
    expect(released).toEqual(['good']);
    expect(errors).toHaveLength(1);
  });
});
