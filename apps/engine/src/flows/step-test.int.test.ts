import type { FlowDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { codeStep, FLOW_MODES } from '../../test/support/flow-constructs.ts';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { flowOf } from '../../test/support/isolate-harness.ts';

const h = useExecutorHarness();

const SECRET = 'sk-step-test-5e8d2c7b9a1f';

const FLOW: FlowDefinition = flowOf(
  {
    type: 'loop',
    name: 'each',
    items: '{{trigger.body.items}}',
    concurrency: 1,
    steps: [
      codeStep(
        'square',
        "console.log('squaring', inputs.x); return { x: inputs.x, squared: inputs.x * inputs.x };",
        {
          x: '{{each.item}}',
        },
      ),
    ],
  },
  codeStep('keyed', 'return { key: inputs.key, total: inputs.total };', {
    key: '{{connections.api}}',
    total: '{{lookup.total}}',
  }),
  codeStep('fails', "throw new Error('no stock');"),
);

// One step of a job alone (EngineJob.test), in every mode: over the sample data, the job's
// connections redacted, nothing reported to the app and no log uploaded.
describe.each(FLOW_MODES)('a step test (%s)', (_mode, mode) => {
  const test = async (step: string, data: Record<string, unknown>) => {
    const job = await h.job(FLOW, { ...mode, connections: { api: SECRET }, test: { step, data } });
    return (await h.executor.execute(job)).outcome;
  };

  it("runs a loop's body step with the item given under the loop's name, and only it", async () => {
    const outcome = await test('square', { each: { item: 7, index: 0 } });
    expect(outcome).toMatchObject({ status: 'SUCCEEDED', logKey: null });
    expect(outcome.steps).toHaveLength(1);
    expect(outcome.steps[0]).toMatchObject({
      name: 'square',
      path: 'each/square',
      status: 'SUCCEEDED',
      input: { x: 7 },
      output: { x: 7, squared: 49 },
      logs: [{ level: 'log', message: 'squaring 7' }],
    });
    expect(h.app.requests).toEqual([]);
  });

  it("resolves the job's connections, whatever the data says, and shows them redacted", async () => {
    const outcome = await test('keyed', { lookup: { total: 3 }, connections: { api: 'from the data' } });
    expect(outcome.steps[0]?.output).toEqual({ key: '[connection:api]', total: 3 });
    expect(JSON.stringify(outcome)).not.toContain(SECRET);
  });

  it('answers a failing step FAILED with its error, naming the step', async () => {
    const outcome = await test('fails', {});
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'CODE_STEP_FAILED', step: 'fails' });
    expect(outcome.error?.message).toMatch(/no stock \(line 1, column \d+\)/);
  });
});
