import type { DispatchedJob } from '@flowbox/protocol';

/** A job the app handed over; `backlog`: runs were queueing (socket-events.ts), so no poll ahead. */
export interface Handed {
  job: DispatchedJob;
  backlog: boolean;
}

/** The answer to a poll ahead of a result: the next job, or none. */
export type AheadPoll = Promise<Handed | undefined>;

/**
 * The worker's side of the poll protocol, one state at a time (docs/architecture.md, "The job
 * hand-off"). A worker runs one job at a time. Its next job comes from a plain poll, from the
 * acknowledgement of its last result, or from a poll made ahead of that result once the engine
 * sent the flow's last response (the run's tail, log upload and result, then overlaps the next):
 *
 *   waiting ──answered: job──▶ handed ──started──▶ running ──finished: result sent, acked──▶ waiting
 *      ▲                         ▲                    │
 *      │                         │                    │ polled-ahead: the flow's last response went
 *      │                         │                    ▼
 *      │                         └──answered: job── ahead ◀──finished: result behind── running+ahead
 *      └───────────────────────────answered: none───┘
 *
 * In `waiting` the acknowledgement of the result just sent answers first (with the next job when
 * the app leased one in the call that completed this one); a plain poll follows only when it
 * brought none. Closing stops only `waiting`: a handed job, or one a poll ahead brings, still runs.
 */
export type PollState =
  /** Holds no job: polls once every result sent is acknowledged (a plain poll means "none held"). */
  | { readonly type: 'waiting' }
  /** The next job is in hand, from a poll or a result's acknowledgement: run it. */
  | { readonly type: 'handed'; readonly handed: Handed }
  /** Runs `handed`; `ahead` is the poll made ahead of its result, once its response went. */
  | { readonly type: 'running'; readonly handed: Handed; readonly ahead: AheadPoll | null }
  /** The job is done and its result on its way behind; the poll ahead brings the next job. */
  | { readonly type: 'ahead'; readonly ahead: AheadPoll };

export type PollEvent =
  /** A poll, a poll ahead or a result's acknowledgement answered, with a job or without. */
  | { readonly type: 'answered'; readonly handed: Handed | undefined }
  /** The handed job started. */
  | { readonly type: 'started' }
  /** A poll ahead of the running job's result went out (see `mayPollAhead`). */
  | { readonly type: 'polled-ahead'; readonly ahead: AheadPoll }
  /** The running job ended (its result is reported by the caller: inline, or behind when ahead). */
  | { readonly type: 'finished' };

export const WAITING: PollState = { type: 'waiting' };

export class PollStateError extends Error {
  override readonly name = 'PollStateError';
}

/** The state after `event`; an event that cannot happen in `state` is a bug and throws. */
export function transition(state: PollState, event: PollEvent): PollState {
  switch (event.type) {
    case 'answered':
      if (state.type !== 'waiting' && state.type !== 'ahead') break;
      return event.handed === undefined ? WAITING : { type: 'handed', handed: event.handed };
    case 'started':
      if (state.type !== 'handed') break;
      return { type: 'running', handed: state.handed, ahead: null };
    case 'polled-ahead':
      if (state.type !== 'running' || state.ahead !== null) break;
      return { ...state, ahead: event.ahead };
    case 'finished':
      if (state.type !== 'running') break;
      return state.ahead === null ? WAITING : { type: 'ahead', ahead: state.ahead };
  }
  throw new PollStateError(`${event.type} cannot happen while ${state.type}`);
}

/**
 * Whether the engine's last response for `runId` may send a poll ahead of that run's result: it
 * must be the job running, with no backlog (under one the next job comes with the result, leased
 * in the Redis call that completes this one) and no poll ahead out yet.
 */
export function mayPollAhead(state: PollState, runId: string): boolean {
  return (
    state.type === 'running' &&
    state.ahead === null &&
    state.handed.job.runId === runId &&
    !state.handed.backlog
  );
}
