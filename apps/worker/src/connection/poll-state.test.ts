import { describe, expect, it } from 'vitest';
import { makeDispatchedJob } from '../test-helpers.ts';
import {
  type Handed,
  mayPollAhead,
  type PollState,
  PollStateError,
  transition,
  WAITING,
} from './poll-state.ts';

const handed = (runId: string, backlog = false): Handed => ({ job: makeDispatchedJob(runId), backlog });
const ahead = Promise.resolve(undefined);

describe('the worker poll states', () => {
  it('runs a polled job and, with its result acknowledged, waits again', () => {
    let state: PollState = transition(WAITING, { type: 'answered', handed: handed('run-1') });
    expect(state).toMatchObject({ type: 'handed' });
    state = transition(state, { type: 'started' });
    expect(state).toMatchObject({ type: 'running', ahead: null });
    state = transition(state, { type: 'finished' });
    expect(state).toBe(WAITING);
    // The acknowledgement brought the next job.
    expect(transition(state, { type: 'answered', handed: handed('run-2') })).toMatchObject({
      type: 'handed',
      handed: { job: { runId: 'run-2' } },
    });
    expect(transition(state, { type: 'answered', handed: undefined })).toBe(WAITING);
  });

  it('takes the next job from the poll ahead once the running one finishes', () => {
    let state: PollState = transition(transition(WAITING, { type: 'answered', handed: handed('run-1') }), {
      type: 'started',
    });
    expect(mayPollAhead(state, 'run-1')).toBe(true);
    state = transition(state, { type: 'polled-ahead', ahead });
    expect(mayPollAhead(state, 'run-1')).toBe(false);
    state = transition(state, { type: 'finished' });
    expect(state).toEqual({ type: 'ahead', ahead });
    expect(transition(state, { type: 'answered', handed: handed('run-2') })).toMatchObject({
      type: 'handed',
    });
    expect(transition(state, { type: 'answered', handed: undefined })).toBe(WAITING);
  });

  it('polls ahead only for the job running, and not under a backlog', () => {
    const running = transition(transition(WAITING, { type: 'answered', handed: handed('run-1') }), {
      type: 'started',
    });
    expect(mayPollAhead(running, 'run-0')).toBe(false);
    const backlogged = transition(transition(WAITING, { type: 'answered', handed: handed('run-1', true) }), {
      type: 'started',
    });
    expect(mayPollAhead(backlogged, 'run-1')).toBe(false);
    expect(mayPollAhead(WAITING, 'run-1')).toBe(false);
  });

  it('refuses an event that cannot happen in a state', () => {
    expect(() => transition(WAITING, { type: 'started' })).toThrow(PollStateError);
    expect(() => transition(WAITING, { type: 'finished' })).toThrow('finished cannot happen while waiting');
    const running = transition(transition(WAITING, { type: 'answered', handed: handed('run-1') }), {
      type: 'started',
    });
    expect(() => transition(running, { type: 'answered', handed: undefined })).toThrow(PollStateError);
    const polled = transition(running, { type: 'polled-ahead', ahead });
    expect(() => transition(polled, { type: 'polled-ahead', ahead })).toThrow(PollStateError);
  });
});
