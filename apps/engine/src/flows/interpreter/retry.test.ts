import type { SerializedError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import type { Clock } from './interpreter-context.ts';
import { attemptWithRetry, backoffMs, retries } from './retry.ts';

const policy = { delayMs: 1_000, factor: 2, maxDelayMs: 5_000, jitter: false };
const failure = (code: SerializedError['code'], message = 'boom'): SerializedError => ({
  name: 'Error',
  code,
  message,
});

describe('backoffMs', () => {
  it('grows by factor from delayMs and stops at maxDelayMs', () => {
    expect([1, 2, 3, 4, 5].map((attempt) => backoffMs(policy, attempt))).toEqual([
      1_000, 2_000, 4_000, 5_000, 5_000,
    ]);
  });

  it('with jitter, a random part of the backoff (full jitter)', () => {
    const jittered = { ...policy, jitter: true };
    expect(backoffMs(jittered, 3, () => 0)).toBe(0);
    expect(backoffMs(jittered, 3, () => 0.5)).toBe(2_000);
    expect(backoffMs(jittered, 3, () => 0.999)).toBe(3_996);
  });

  it('factor 1 keeps the delay constant', () => {
    expect(backoffMs({ ...policy, factor: 1 }, 10)).toBe(1_000);
  });
});

describe('retries', () => {
  it('absent `on` retries every failure', () => {
    expect(retries(undefined, failure('CODE_STEP_FAILED'))).toBe(true);
  });

  it('matches codes, and HTTP statuses named in the message', () => {
    expect(retries(['STEP_TIMEOUT'], failure('STEP_TIMEOUT'))).toBe(true);
    expect(retries(['STEP_TIMEOUT'], failure('CODE_STEP_FAILED'))).toBe(false);
    expect(retries([503], failure('CODE_STEP_FAILED', 'Error: HTTP 503 from upstream'))).toBe(true);
    expect(retries([429], failure('STEP_FAILED', 'request failed with status 429'))).toBe(true);
    expect(retries([503], failure('CODE_STEP_FAILED', 'HTTP 500'))).toBe(false);
    expect(retries([503], failure('CODE_STEP_FAILED', 'took 5030 ms'))).toBe(false);
  });
});

/** A clock that moves only when slept on, recording the sleeps. */
function steppedClock(start = 1_000_000): Clock & { slept: number[] } {
  let now = start;
  const slept: number[] = [];
  return {
    slept,
    now: () => now,
    async sleep(ms) {
      slept.push(ms);
      now += ms;
    },
  };
}

describe('attemptWithRetry', () => {
  const retry = { maxAttempts: 4, delayMs: 100, factor: 2, maxDelayMs: 10_000, jitter: false };

  it('sleeps in place below pauseMinMs and ends with the success, the failed attempts kept', async () => {
    const clock = steppedClock();
    const outcomes = [{ error: failure('STEP_FAILED') }, { error: failure('STEP_FAILED') }, { output: 3 }];
    const end = await attemptWithRetry(
      retry,
      undefined,
      { clock, pauseMinMs: 1_000 },
      async () => outcomes.shift() ?? {},
    );
    expect(end.kind).toBe('ended');
    expect(end.kind === 'ended' && end.outcome).toEqual({ output: 3 });
    expect(end.attempts).toHaveLength(2);
    expect(clock.slept).toEqual([100, 200]);
  });

  it('blocks once the backoff reaches pauseMinMs, and goes on from the waiting entry', async () => {
    const clock = steppedClock();
    const failing = async () => ({ error: failure('STEP_FAILED') });
    const first = await attemptWithRetry(retry, undefined, { clock, pauseMinMs: 150 }, failing);
    // 100 ms sleeps in place; the 200 ms after the second failure pauses.
    expect(first).toMatchObject({ kind: 'blocked', until: clock.now() + 200 });
    expect(first.attempts).toHaveLength(2);
    const waiting = {
      status: 'WAITING' as const,
      until: new Date(first.kind === 'blocked' ? first.until : 0).toISOString(),
      attempts: first.attempts,
    };
    // Resumed early: it blocks again with the same time.
    const early = await attemptWithRetry(retry, waiting, { clock, pauseMinMs: 150 }, failing);
    expect(early).toMatchObject({ kind: 'blocked', until: Date.parse(waiting.until) });
    // Resumed on time: the third attempt, then the fourth fails the step (maxAttempts).
    clock.sleep(200);
    const last = await attemptWithRetry(retry, waiting, { clock, pauseMinMs: 10_000 }, failing);
    expect(last.kind).toBe('ended');
    expect(last.attempts).toHaveLength(3);
  });
});
