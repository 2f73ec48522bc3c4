import type { TriggerPayload } from '@flowbox/protocol';

/** What a schedule trigger outputs: the tick's time and when the app fired it (ISO 8601). */
export interface TickOutput {
  scheduledAt: string;
  firedAt: string;
}

/**
 * The app fires a tick with `{ scheduledAt, firedAt }` as the payload's body. A manual run of a
 * schedule flow may send them to replay a tick; what it leaves out is the moment the run started.
 */
export function tickOutput(payload: TriggerPayload): TickOutput {
  const body = typeof payload.body === 'object' && payload.body !== null ? payload.body : {};
  const now = new Date().toISOString();
  const firedAt = typeof body.firedAt === 'string' ? body.firedAt : now;
  const scheduledAt = typeof body.scheduledAt === 'string' ? body.scheduledAt : firedAt;
  return { scheduledAt, firedAt };
}
