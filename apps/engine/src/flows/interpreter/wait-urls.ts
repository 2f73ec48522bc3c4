import { createHmac } from 'node:crypto';
import {
  OTHERWISE,
  type StepDefinition,
  stepPath,
  WAITS_ROOT,
  type WaitStepUrls,
  type WaitUrls,
  waitStepUrls,
} from '@flowbox/protocol';
import type { ScopeFrame } from './run-scope.ts';

/**
 * The `waits` template root: `{{waits.<name>.resumeUrl}}` (and syncUrl, approveUrl, rejectUrl)
 * for every `wait` step a frame's steps can reach without entering a loop (its own body, router
 * branches), at its path in that frame. A loop iteration's frame adds its body's waits at that
 * iteration's paths (`each[2]/approval`). The token is base64url(HMAC-SHA256(key, path)), the key
 * the run's (job.waitUrls.key, its UTF-8 bytes); the app checks a URL with the same derivation.
 * Templates resolve in the engine's realm: user code sees the URLs, never the key.
 */
export function waitUrlsIn(
  steps: readonly StepDefinition[],
  prefix: string,
  run: { runId: string; urls: WaitUrls },
  into: Record<string, WaitStepUrls> = {},
): Record<string, WaitStepUrls> {
  for (const step of steps) {
    const path = stepPath(prefix, step.name);
    if (step.type === 'wait') {
      into[step.name] = waitStepUrls(run.urls.baseUrl, run.runId, path, waitToken(run.urls.key, path));
    } else if (step.type === 'router') {
      for (const branch of step.branches) waitUrlsIn(branch.steps, `${path}/${branch.name}`, run, into);
      if (step.otherwise !== undefined) waitUrlsIn(step.otherwise, `${path}/${OTHERWISE}`, run, into);
    }
  }
  return into;
}

/** A wait URL's token for `path`. */
export function waitToken(key: string, path: string): string {
  return createHmac('sha256', key).update(path).digest('base64url');
}

/** Whether a body holds a wait step outside nested loops (its frame needs a `waits` root). */
export function holdsWaits(steps: readonly StepDefinition[]): boolean {
  return steps.some(
    (step) =>
      step.type === 'wait' ||
      (step.type === 'router' &&
        (step.branches.some((branch) => holdsWaits(branch.steps)) ||
          (step.otherwise !== undefined && holdsWaits(step.otherwise)))),
  );
}

/** A loop iteration's `waits` root: the frame's, with the body's waits at this iteration's paths. */
export function iterationWaits(
  frame: ScopeFrame,
  body: readonly StepDefinition[],
  prefix: string,
  run: { runId: string; urls: WaitUrls },
): Record<string, WaitStepUrls> {
  const outer = frame[WAITS_ROOT];
  const into: Record<string, WaitStepUrls> =
    typeof outer === 'object' && outer !== null ? { ...(outer as Record<string, WaitStepUrls>) } : {};
  return waitUrlsIn(body, prefix, run, into);
}
