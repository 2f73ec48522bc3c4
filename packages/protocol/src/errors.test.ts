import { describe, expect, it } from 'vitest';
import { ERROR_CATALOG, type ErrorCode, runStatusOf } from './errors.ts';
import { failedOutcome } from './run.ts';

const codes = Object.keys(ERROR_CATALOG) as ErrorCode[];

describe('error catalog', () => {
  it('gives every code a run status its family agrees with: user FAILED, system INTERNAL_ERROR, either TIMEOUT', () => {
    for (const code of codes) {
      const { family } = ERROR_CATALOG[code];
      const allowed = family === 'user' ? ['FAILED', 'TIMEOUT'] : ['INTERNAL_ERROR', 'TIMEOUT'];
      expect(allowed, code).toContain(runStatusOf(code));
    }
  });

  it('ends a crashed engine or a lost worker INTERNAL_ERROR, an abandoned run and a slow flow TIMEOUT', () => {
    expect(runStatusOf('ENGINE_CRASHED')).toBe('INTERNAL_ERROR');
    expect(runStatusOf('WORKER_LOST')).toBe('INTERNAL_ERROR');
    expect(runStatusOf('RUN_ABANDONED')).toBe('TIMEOUT');
    expect(runStatusOf('FLOW_TIMEOUT')).toBe('TIMEOUT');
    expect(runStatusOf('CODE_STEP_TIMEOUT')).toBe('FAILED');
    expect(runStatusOf('ENGINE_MEMORY_LIMIT')).toBe('FAILED');
    expect(runStatusOf('STEP_FAILED')).toBe('FAILED');
  });

  it("builds an outcome no engine reported on with the status of its error's code", () => {
    const error = { name: 'E', code: 'PROVISION_FAILED' as const, message: 'gone' };
    expect(failedOutcome(error)).toEqual({ status: 'INTERNAL_ERROR', error, steps: [], logKey: null });
  });
});
