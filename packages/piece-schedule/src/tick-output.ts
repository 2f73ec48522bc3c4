import type { TriggerPayload } from '@flowbox/protocol';

/** What a schedule trigger outputs: the tick's time and when the app fired it (ISO 8601). */
export interface TickOutput {
  scheduledAt: string;
  firedAt: string;
  /** A manual run's other payload fields. */
  [field: string]: unknown;
}

/**
 * The app fires a tick with `{ scheduledAt, firedAt }` as the payload's body: that is the
 * output. A manual run's payload is the output too (its fields read as `{{trigger.x}}`); it may
 * send `scheduledAt` and `firedAt` to replay a tick, else both are the moment the run started.
 */
export function tickOutput(payload: TriggerPayload): TickOutput {
  const body = typeof payload.body === 'object' && payload.body !== null ? payload.body : {};
  const now = new Date().toISOString();
  const firedAt = typeof body.firedAt === 'string' ? body.firedAt : now;
  const scheduledAt = typeof body.scheduledAt === 'string' ? body.scheduledAt : firedAt;
  return { ...body, scheduledAt, firedAt };
}
