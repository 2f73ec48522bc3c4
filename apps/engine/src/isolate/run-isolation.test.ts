import { describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../flows/flow-executor.harness.ts';
import { SEEDED_FLOW } from '../testing/index.ts';

const h = useExecutorHarness();

describe('a run in its own isolate (RUN_ISOLATION=isolate)', () => {
  it('runs the seeded flow: every step, the response and the log, as in the engine', async () => {
    const { outcome } = await h.executor.execute(await h.job(SEEDED_FLOW, { isolation: 'isolate' }));
    expect(outcome.error).toBeUndefined();
    expect(outcome.status).toBe('SUCCEEDED');
    expect(outcome.steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['trigger', 'webhook/catch_webhook', 'SUCCEEDED'],
      ['step_1', 'math-helper/addition_math', 'SUCCEEDED'],
      ['step_2', 'code', 'SUCCEEDED'],
      ['step_3', 'webhook/return_response', 'SUCCEEDED'],
    ]);
    expect(outcome.steps[1]?.output).toEqual({ result: 5 });
    expect(outcome.steps[2]).toMatchObject({ input: { sum: 5 }, output: { result: 6 } });
    expect(outcome.steps[3]?.output).toEqual({ status: 200, headers: {}, body: { result: 6 } });
    expect(h.posts('response')).toHaveLength(1);
  });
});
