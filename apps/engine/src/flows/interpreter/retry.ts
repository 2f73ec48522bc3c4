import type { CheckpointStep, RetryPolicy, SerializedError } from '@flowbox/protocol';
import type { Clock } from './interpreter-context.ts';
import type { LeafOutcome } from './leaf-executor.ts';

/** One failed attempt of a step with `retry`, as its result and its checkpoint record it. */
export interface FailedAttempt {
  error: SerializedError;
  startedAt: string;
  durationMs: number;
}

/**
 * The wait before the attempt after failed attempt `attempt` (1 for the first):
 * `min(maxDelayMs, delayMs × factor^(attempt-1))`; with `jitter`, a random part of it (full
 * jitter: `random() × backoff`), so clients that failed together do not retry together.
 */
export function backoffMs(
  policy: Pick<RetryPolicy, 'delayMs' | 'factor' | 'maxDelayMs' | 'jitter'>,
  attempt: number,
  random: () => number = Math.random,
): number {
  const backoff = Math.min(policy.maxDelayMs, policy.delayMs * policy.factor ** Math.max(0, attempt - 1));
  return Math.round(policy.jitter ? random() * backoff : backoff);
}

/**
 * Whether `on` retries this failure: absent, every failure; else an entry equal to its code, or
 * a number equal to the HTTP status its message names (`HTTP 503`, `status 429`: what the `http`
 * piece's and `ctx.fetch`'s callers throw; a serialized error carries no status of its own).
 */
export function retries(on: RetryPolicy['on'], error: SerializedError): boolean {
  if (on === undefined) return true;
  let status: number | undefined;
  for (const entry of on) {
    if (typeof entry === 'string') {
      if (entry === error.code) return true;
      continue;
    }
    status ??= httpStatusIn(error.message) ?? -1;
    if (entry === status) return true;
  }
  return false;
}

const HTTP_STATUS = /\b(?:HTTP|[Ss]tatus)[ :]+([1-5]\d\d)\b/;

function httpStatusIn(message: string): number | undefined {
  const match = HTTP_STATUS.exec(message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/** How a step with `retry` ended this time: its last attempt's outcome, or blocked until its next. */
export type RetryEnd =
  | { kind: 'ended'; outcome: LeafOutcome; attempts: FailedAttempt[] }
  | { kind: 'blocked'; until: number; attempts: FailedAttempt[] };

/**
 * Attempts `attempt` until it succeeds, fails in a way `on` does not retry, or used up
 * `maxAttempts`. A backoff shorter than `pauseMinMs` sleeps in place; a longer one blocks the
 * step (the run pauses; the resume calls this again with the checkpoint's WAITING entry, whose
 * attempts count on). The outcome's `attempts` are the failed ones before the last.
 */
export async function attemptWithRetry(
  policy: RetryPolicy,
  waiting: CheckpointStep | undefined,
  time: { clock: Clock; pauseMinMs: number; random?: () => number },
  attempt: () => Promise<LeafOutcome>,
): Promise<RetryEnd> {
  const { clock } = time;
  const attempts: FailedAttempt[] = waiting?.attempts === undefined ? [] : [...waiting.attempts];
  if (waiting?.until !== undefined) {
    const left = Date.parse(waiting.until) - clock.now();
    if (left >= time.pauseMinMs) return { kind: 'blocked', until: Date.parse(waiting.until), attempts };
    if (left > 0) await clock.sleep(left);
  }
  for (;;) {
    const startedAt = clock.now();
    const outcome = await attempt();
    const error = outcome.error;
    if (error === undefined || attempts.length + 1 >= policy.maxAttempts || !retries(policy.on, error)) {
      return { kind: 'ended', outcome, attempts };
    }
    const now = clock.now();
    attempts.push({
      error,
      startedAt: new Date(startedAt).toISOString(),
      durationMs: Math.max(0, now - startedAt),
    });
    const wait = backoffMs(policy, attempts.length, time.random);
    if (wait >= time.pauseMinMs) return { kind: 'blocked', until: now + wait, attempts };
    if (wait > 0) await clock.sleep(wait);
  }
}
