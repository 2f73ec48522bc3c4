/**
 * When `pnpm dev` starts a dead app or worker again: after a delay that doubles with each death
 * inside the window, and not at all once it has died `maxDeaths` times inside the window (a
 * crash loop: restarting it again would only print the same stack trace forever).
 */
export interface RestartPolicy {
  initialDelayMs: number;
  maxDelayMs: number;
  maxDeaths: number;
  windowMs: number;
}

export const DEFAULT_RESTART_POLICY: RestartPolicy = {
  initialDelayMs: 500,
  maxDelayMs: 8_000,
  maxDeaths: 5,
  windowMs: 60_000,
};

export type RestartDecision = { restart: true; delayMs: number } | { restart: false; reason: string };

/** `deaths`: when the process died so far (ms, oldest first), the death being decided on last. */
export function decideRestart(deaths: readonly number[], policy: RestartPolicy): RestartDecision {
  const latest = deaths.at(-1);
  if (latest === undefined) return { restart: true, delayMs: policy.initialDelayMs };
  const recent = deaths.filter((at) => latest - at < policy.windowMs).length;
  if (recent >= policy.maxDeaths) {
    return {
      restart: false,
      reason: `it died ${recent} times within ${Math.round(policy.windowMs / 1000)} s`,
    };
  }
  return { restart: true, delayMs: Math.min(policy.maxDelayMs, policy.initialDelayMs * 2 ** (recent - 1)) };
}
