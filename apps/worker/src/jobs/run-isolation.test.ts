import { describe, expect, it } from 'vitest';
import { runIsolationFor } from './run-isolation.ts';

describe('runIsolationFor', () => {
  it('follows the job in an isolate worker: isolate unless its flow needs Node', () => {
    expect(runIsolationFor('isolate', {})).toBe('isolate');
    expect(runIsolationFor('isolate', { isolation: 'isolate' })).toBe('isolate');
    expect(runIsolationFor('isolate', { isolation: 'process' })).toBe('process');
    expect(runIsolationFor('isolate', { isolation: 'shared' })).toBe('shared');
  });

  it("keeps a shared or process worker's own way for every job", () => {
    for (const job of [{}, { isolation: 'isolate' as const }, { isolation: 'process' as const }]) {
      expect(runIsolationFor('shared', job)).toBe('shared');
      expect(runIsolationFor('process', job)).toBe('process');
    }
  });
});
