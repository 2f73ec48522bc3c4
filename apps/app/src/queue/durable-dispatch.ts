import { createHmac } from 'node:crypto';
import { type FlowDefinition, walkSteps } from '@flowbox/protocol';

/** What a flow version's steps allow, decided once per version at its first dispatch. */
export interface PauseTraits {
  /** A delay, wait or flow step, or a step with `retry`: its runs get a checkpoint upload. */
  canPause: boolean;
  /** A wait step: its runs get the wait URLs' key. */
  hasWaits: boolean;
}

export function pauseTraits(definition: Pick<FlowDefinition, 'steps'>): PauseTraits {
  let canPause = false;
  let hasWaits = false;
  for (const { step } of walkSteps(definition)) {
    if (step.type === 'wait') hasWaits = true;
    if (step.type === 'delay' || step.type === 'wait' || step.type === 'flow') canPause = true;
    if ((step.type === 'piece' || step.type === 'code') && step.retry !== undefined) canPause = true;
  }
  return { canPause, hasWaits };
}

/** Labels the derivation of the wait-URL secret from TOKEN_SECRET, so the two never coincide. */
const WAIT_URL_LABEL = 'flowbox wait urls';

/** WAIT_URL_SECRET, or one derived from TOKEN_SECRET when it is unset. */
export function waitUrlSecret(config: {
  WAIT_URL_SECRET?: string | undefined;
  TOKEN_SECRET: string;
}): string {
  return (
    config.WAIT_URL_SECRET ??
    createHmac('sha256', config.TOKEN_SECRET).update(WAIT_URL_LABEL).digest('base64url')
  );
}

/** A run's wait-URL key (WaitUrls.key): base64url(HMAC-SHA256(secret, runId)). */
export function waitUrlKey(secret: string, runId: string): string {
  return createHmac('sha256', secret).update(runId).digest('base64url');
}

/** The checkpoint a pause after the `resumes`-th resume writes (0: the run's first attempt). */
export function checkpointKey(runId: string, resumes: number): string {
  return `checkpoints/${runId}/${resumes}.json`;
}

/** Every checkpoint key a run with this many resumes may have written, for retention. */
export function checkpointKeys(runId: string, resumes: number): string[] {
  return Array.from({ length: resumes + 1 }, (_, n) => checkpointKey(runId, n));
}
