import { describe, expect, it } from 'vitest';
import { answerOf } from './step-tests.ts';

const step = {
  name: 'total',
  kind: 'code',
  input: {},
  startedAt: '2026-11-29T12:00:00.000Z',
  durationMs: 4,
} as const;

describe("a step test's answer from its job's outcome", () => {
  it('is the step: its output and console lines', () => {
    const answer = answerOf('total', {
      status: 'SUCCEEDED',
      steps: [
        { ...step, status: 'SUCCEEDED', output: { total: 7 }, logs: [{ level: 'log', message: 'hi' }] },
      ],
      logKey: null,
    });
    expect(answer).toEqual({
      status: 'SUCCEEDED',
      output: { total: 7 },
      logs: [{ level: 'log', message: 'hi' }],
      durationMs: 4,
    });
  });

  it("is FAILED with the step's error, also when the step went on past it (continueOnFailure)", () => {
    const error = { name: 'Error', code: 'CODE_STEP_FAILED', message: 'boom', step: 'total' } as const;
    const answer = answerOf('total', {
      status: 'SUCCEEDED',
      steps: [
        {
          ...step,
          status: 'FAILED',
          error,
          continued: true,
          output: { error: { code: error.code, message: 'boom' } },
        },
      ],
      logKey: null,
    });
    expect(answer).toMatchObject({ status: 'FAILED', error });
  });

  it("is FAILED with the job's error when the step never ran (the engine died, the worker left)", () => {
    const error = {
      name: 'WorkerLost',
      code: 'WORKER_LOST',
      message: 'the worker running this job disconnected',
    } as const;
    expect(answerOf('total', { status: 'INTERNAL_ERROR', error, steps: [], logKey: null })).toEqual({
      status: 'FAILED',
      error,
      durationMs: 0,
    });
  });
});
