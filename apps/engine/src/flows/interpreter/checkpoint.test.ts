import type { CheckpointStep, StepResult } from '@flowbox/protocol';
import { CheckpointSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { buildCheckpoint, finishedEntry } from './checkpoint.ts';

const result = (over: Partial<StepResult>): StepResult => ({
  name: 'a',
  kind: 'code',
  status: 'SUCCEEDED',
  input: {},
  startedAt: new Date(0).toISOString(),
  durationMs: 1,
  ...over,
});

describe('buildCheckpoint', () => {
  const steps = new Map<string, CheckpointStep>([
    ['first', { status: 'SUCCEEDED', output: { big: 'x'.repeat(10) } }],
    ['each[0]/nap', { status: 'WAITING', until: '2026-11-29T12:00:00.000Z' }],
    ['constructor', { status: 'SUCCEEDED', output: 1 }],
  ]);

  it('holds every recorded path, resumes 0 the first time', () => {
    const checkpoint = buildCheckpoint({ runId: 'r', flowVersionId: 'v' }, steps, undefined);
    expect(CheckpointSchema.parse(checkpoint)).toEqual(checkpoint);
    expect(checkpoint).toMatchObject({ version: 1, runId: 'r', flowVersionId: 'v', resumes: 0 });
    expect(Object.keys(checkpoint.steps)).toEqual(['first', 'each[0]/nap', 'constructor']);
    expect(JSON.parse(JSON.stringify(checkpoint)).steps.constructor).toEqual({
      status: 'SUCCEEDED',
      output: 1,
    });
  });

  it('counts on from the checkpoint the run resumed from', () => {
    expect(buildCheckpoint({ runId: 'r', flowVersionId: 'v' }, steps, { resumes: 2 }).resumes).toBe(3);
  });
});

describe('finishedEntry', () => {
  it('keeps the output as returned, and a continued failure its error', () => {
    const output = { n: 1 };
    expect(finishedEntry(result({}), output)).toEqual({ status: 'SUCCEEDED', output });
    const error = { name: 'Error', code: 'CODE_STEP_FAILED' as const, message: 'no' };
    const attempts = [{ error, startedAt: new Date(0).toISOString(), durationMs: 2 }];
    expect(
      finishedEntry(result({ status: 'FAILED', error, attempts }), { error: { code: error.code } }),
    ).toEqual({
      status: 'FAILED',
      output: { error: { code: 'CODE_STEP_FAILED' } },
      error,
      attempts,
    });
  });
});
