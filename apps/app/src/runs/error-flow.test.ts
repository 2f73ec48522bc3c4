import type { StepResult } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { errorFlowDetails } from './error-flow.ts';

const step = (name: string, status: StepResult['status'], path?: string): StepResult => ({
  name,
  ...(path === undefined ? {} : { path }),
  kind: 'code',
  status,
  input: {},
  startedAt: '2026-11-25T10:00:00.000Z',
  durationMs: 1,
});
const ERROR = {
  name: 'Error',
  code: 'CODE_STEP_FAILED' as const,
  message: 'boom',
  step: 'named',
  stack: 's',
};

describe("an error flow's report", () => {
  it('names the last failed step with its path, and the error without its stack', () => {
    const steps = [step('a', 'FAILED', 'a'), step('b', 'SUCCEEDED'), step('c', 'FAILED', 'each[2]/c')];
    expect(errorFlowDetails({ error: ERROR, steps })).toEqual({
      error: { code: 'CODE_STEP_FAILED', message: 'boom' },
      failedStep: { name: 'c', path: 'each[2]/c' },
    });
  });

  it('falls back on the step the error names, and on null when there is neither', () => {
    expect(errorFlowDetails({ error: ERROR, steps: [] }).failedStep).toEqual({ name: 'named' });
    expect(errorFlowDetails({ steps: undefined })).toEqual({ error: null, failedStep: null });
  });
});
