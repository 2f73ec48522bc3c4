import { SEEDED_FLOW } from '@flowbox/engine/testing';
import type { ExecutionMode, FlowDefinition } from '@flowbox/protocol';
import { FlowResponseReportSchema } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

/** One suite, both EXECUTION_MODEs: the worker passes the mode through and the results agree. */
describe.each<ExecutionMode>(['SANDBOX_CODE_ONLY', 'UNSANDBOXED'])('EXECUTION_MODE=%s', (executionMode) => {
  let harness: WorkerHarness;

  beforeAll(async () => {
    harness = await startWorkerHarness({
      sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 512 * 1024 * 1024 },
      executionMode,
    });
  });

  afterAll(async () => {
    await harness.close();
  });

  it('answers the seeded flow with {"result":6}', async () => {
    const result = await harness.runner.run(await harness.job('run-ok'));
    expect(result.status).toBe('SUCCEEDED');
    const response = harness.app.requests.find((r) => r.url === '/v1/engine/runs/run-ok/response');
    expect(FlowResponseReportSchema.parse(response?.json).response.body).toEqual({ result: 6 });
  });

  it('fails a throwing code step with CODE_STEP_FAILED', async () => {
    const flow: FlowDefinition = {
      trigger: SEEDED_FLOW.trigger,
      steps: [{ type: 'code', name: 'step_1', code: "throw new Error('boom');", input: {} }],
    };
    const result = await harness.runner.run(await harness.job('run-throw', { flow }));
    expect(result).toMatchObject({ status: 'FAILED', error: { code: 'CODE_STEP_FAILED', step: 'step_1' } });
  });
});
