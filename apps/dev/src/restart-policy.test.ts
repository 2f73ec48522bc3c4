import { describe, expect, it } from 'vitest';
import { decideRestart, type RestartPolicy } from './restart-policy.ts';

const policy: RestartPolicy = { initialDelayMs: 500, maxDelayMs: 3_000, maxDeaths: 4, windowMs: 60_000 };

describe('decideRestart', () => {
  it('restarts after the initial delay, doubling with each death inside the window, up to the cap', () => {
    expect(decideRestart([1_000], policy)).toEqual({ restart: true, delayMs: 500 });
    expect(decideRestart([1_000, 2_000], policy)).toEqual({ restart: true, delayMs: 1_000 });
    expect(decideRestart([1_000, 2_000, 3_000], policy)).toEqual({ restart: true, delayMs: 2_000 });
    const capped = { ...policy, maxDeaths: 10 };
    expect(decideRestart([1, 2, 3, 4, 5], capped)).toEqual({ restart: true, delayMs: 3_000 });
  });

  it('gives up on a crash loop: maxDeaths deaths inside the window', () => {
    expect(decideRestart([1_000, 2_000, 3_000, 4_000], policy)).toEqual({
      restart: false,
      reason: 'it died 4 times within 60 s',
    });
  });

  it('forgets deaths older than the window: a process that dies once a while keeps being restarted', () => {
    const spread = [0, 100_000, 200_000, 300_000, 400_000, 500_000];
    expect(decideRestart(spread, policy)).toEqual({ restart: true, delayMs: 500 });
    expect(decideRestart([0, 30_000, 61_000, 62_000], policy)).toEqual({ restart: true, delayMs: 2_000 });
  });
});
