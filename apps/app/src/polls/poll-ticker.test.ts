import { createLogger } from '@flowbox/node-kit';
import { describe, expect, it, vi } from 'vitest';
import { AppMetrics } from '../metrics/app-metrics.ts';
import { PollJobs } from './poll-jobs.ts';
import { PollTicker } from './poll-ticker.ts';
import type { PollsRepository } from './polls-repository.ts';

/** One polled flow, every second; records the reads and the claims. */
function memoryPolls() {
  const calls = { reads: 0, claims: 0 };
  const poll = {
    flowId: 'p',
    flowVersionId: 'p-v1',
    piece: 'http',
    input: { intervalSeconds: 1 },
    lastTick: null,
  };
  const repo = {
    async listChanged(after: number) {
      calls.reads++;
      return after < 0 ? { changes: [{ flowId: 'p', poll }], seq: 1 } : { changes: [], seq: after };
    },
    async claimTick() {
      calls.claims++;
      return { outcome: 'taken' as const };
    },
  } as unknown as PollsRepository;
  return { repo, calls };
}

describe('PollTicker', () => {
  it('sleeps until its next read while the app has no workers, instead of waking at once', async () => {
    vi.useFakeTimers({ now: new Date('2026-11-29T09:00:30.000Z') });
    try {
      const { repo, calls } = memoryPolls();
      let workers = 0;
      let asked = 0;
      const ticker = new PollTicker({
        polls: repo,
        jobs: new PollJobs(),
        dispatch: async () => {
          throw new Error('not dispatched in this test');
        },
        metrics: new AppMetrics(),
        logger: createLogger({ name: 'test', level: 'silent' }),
        refreshMs: 1_000,
        pollTimeoutMs: 1_000,
        waitMs: 1_000,
        hasWorkers: () => {
          asked++;
          return workers > 0;
        },
      });
      ticker.start();
      // A due tick this app cannot take would otherwise wake the loop at once, again and again.
      await vi.advanceTimersByTimeAsync(5_000);
      expect(calls.claims).toBe(0);
      // A few passes a second (reads, and the wake at each read), not a pass per event-loop turn.
      expect(asked).toBeLessThan(50);
      expect(calls.reads).toBeGreaterThanOrEqual(4);
      expect(calls.reads).toBeLessThanOrEqual(6);
      workers = 1;
      await vi.advanceTimersByTimeAsync(3_000);
      // Claimed (taken by another app here) once a second from the next read on.
      expect(calls.claims).toBeGreaterThanOrEqual(2);
      expect(calls.claims).toBeLessThanOrEqual(4);
      await ticker.close();
    } finally {
      vi.useRealTimers();
    }
  });
});
