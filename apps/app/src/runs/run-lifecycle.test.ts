import { describe, expect, it } from 'vitest';
import { decideConclusion } from './run-lifecycle.ts';

const error = (code: 'ENGINE_CRASHED' | 'WORKER_LOST' | 'CODE_STEP_FAILED' | 'FLOW_TIMEOUT') => ({
  name: 'E',
  code,
  message: code,
});

describe('decideConclusion', () => {
  it('retries what the catalog marks retryable while attempts are left', () => {
    expect(decideConclusion({ error: error('ENGINE_CRASHED') }, 1, 2)).toBe('retry');
    expect(decideConclusion({ error: error('WORKER_LOST') }, 1, 3)).toBe('retry');
    expect(decideConclusion({ error: error('WORKER_LOST') }, 2, 3)).toBe('retry');
  });

  it('records as final: the last attempt, a flow that failed or timed out, and a success', () => {
    expect(decideConclusion({ error: error('ENGINE_CRASHED') }, 2, 2)).toBe('final');
    expect(decideConclusion({ error: error('WORKER_LOST') }, 1, 1)).toBe('final');
    expect(decideConclusion({ error: error('CODE_STEP_FAILED') }, 1, 2)).toBe('final');
    expect(decideConclusion({ error: error('FLOW_TIMEOUT') }, 1, 2)).toBe('final');
    expect(decideConclusion({}, 1, 2)).toBe('final');
  });
});
