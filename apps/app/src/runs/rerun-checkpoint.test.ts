import type { StepResult } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { rerunCheckpoint } from './rerun-checkpoint.ts';

const at = { input: {}, startedAt: '2026-11-29T12:00:00.000Z', durationMs: 1 };
const step = (fields: Partial<StepResult> & Pick<StepResult, 'name' | 'status'>): StepResult => ({
  kind: 'code',
  ...at,
  ...fields,
});

describe('rerunCheckpoint', () => {
  it('replays succeeded and continued steps by path, not the failed one nor dropped outputs', () => {
    const { checkpoint, replayed } = rerunCheckpoint(
      {
        steps: [
          step({ name: 'trigger', kind: 'webhook/catch_webhook', status: 'SUCCEEDED', output: { a: 1 } }),
          step({ name: 'charge', status: 'SUCCEEDED', output: { charged: true } }),
          step({ name: 'check', path: 'each[1]/check', status: 'SUCCEEDED', output: 2 }),
          step({
            name: 'soft',
            status: 'FAILED',
            continued: true,
            output: { error: { code: 'STEP_FAILED', message: 'm' } },
            error: { name: 'Error', code: 'STEP_FAILED', message: 'm' },
          }),
          step({ name: 'big', status: 'SUCCEEDED', output: { dropped: '2000000 bytes' } }),
          step({ name: 'skipped', status: 'SKIPPED' }),
          step({
            name: 'ship',
            status: 'FAILED',
            error: { name: 'Error', code: 'STEP_FAILED', message: 'boom' },
          }),
        ],
      },
      { runId: 'new', flowVersionId: 'v1' },
    );
    expect(replayed).toBe(4);
    expect(checkpoint).toEqual({
      version: 1,
      runId: 'new',
      flowVersionId: 'v1',
      resumes: 0,
      steps: {
        trigger: { status: 'SUCCEEDED', output: { a: 1 } },
        charge: { status: 'SUCCEEDED', output: { charged: true } },
        'each[1]/check': { status: 'SUCCEEDED', output: 2 },
        soft: {
          status: 'FAILED',
          output: { error: { code: 'STEP_FAILED', message: 'm' } },
          error: { name: 'Error', code: 'STEP_FAILED', message: 'm' },
        },
      },
    });
  });
});
