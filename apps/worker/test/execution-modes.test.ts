import { SEEDED_FLOW } from '@flowbox/engine/testing';
import type { ExecutionMode, FlowDefinition } from '@flowbox/protocol';
import { FlowResponseReportSchema } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordingLogger } from '../src/test-helpers.ts';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

/**
 * One suite, every EXECUTION_MODE: the worker passes the mode through and the results agree;
 * and each sandboxing mode with every run in its own isolate (RUN_ISOLATION=isolate), which
 * composes with them: in SANDBOXED the isolates run inside the bubblewrapped engine.
 */
describe.each<[ExecutionMode, boolean]>([
  ['SANDBOX_CODE_ONLY', false],
  ['SANDBOXED', false],
  ['UNSANDBOXED', false],
  ['SANDBOX_CODE_ONLY', true],
  ['SANDBOXED', true],
])('EXECUTION_MODE=%s, each run in its own isolate: %s', (executionMode, isolate) => {
  let harness: WorkerHarness;

  beforeAll(async () => {
    harness = await startWorkerHarness({
      sandbox: {
        reuse: true,
        maxJobs: 1000,
        maxRssBytes: 512 * 1024 * 1024,
        ...(isolate ? { isolate: { prewarm: false } } : {}),
      },
      executionMode,
      // 127.0.0.1 (the fake app) by name; everything else refused.
      egress: { allowPublic: false, named: [{ host: '127.0.0.1', port: null }] },
    });
  });

  afterAll(async () => {
    await harness.close();
  });

  it('answers the seeded flow with {"result":6}', async () => {
    const result = await harness.runner.run(await harness.job('run-ok'));
    expect(result.outcome.status).toBe('SUCCEEDED');
    const response = harness.app.requests.find((r) => r.url === '/v1/engine/runs/run-ok/response');
    expect(FlowResponseReportSchema.parse(response?.json).response.body).toEqual({ result: 6 });
  });

  it('runs the job in its own isolate exactly when RUN_ISOLATION=isolate asks', async () => {
    // A run's isolate has the web globals it is handed; a code step's own context has none.
    const flow: FlowDefinition = {
      trigger: SEEDED_FLOW.trigger,
      steps: [{ type: 'code', name: 'step_1', code: 'return typeof TextEncoder;', input: {} }],
    };
    const result = await harness.runner.run(await harness.job('run-where', { flow }));
    expect(result.outcome.steps[1]?.output).toBe(isolate ? 'function' : 'undefined');
  });

  it("lets a code step fetch what the policy names, from the worker's side in SANDBOXED", async () => {
    const flow: FlowDefinition = {
      trigger: SEEDED_FLOW.trigger,
      steps: [
        {
          type: 'code',
          name: 'step_1',
          code: "console.log('fetching'); const r = await fetch(inputs.url); return { status: r.status };",
          // The fake app answers 204 to any request it has no rule for.
          input: { url: `${harness.app.url}/not-a-route` },
        },
        { type: 'code', name: 'step_2', code: "return await fetch('http://localhost:9/');", input: {} },
      ],
    };
    const result = await harness.runner.run(await harness.job('run-fetch', { flow }));
    // steps[0] is the trigger.
    expect(result.outcome.steps[1]).toMatchObject({
      status: 'SUCCEEDED',
      output: { status: 204 },
      logs: [{ level: 'log', message: 'fetching' }],
    });
    expect(result.outcome).toMatchObject({
      status: 'FAILED',
      error: { code: 'EGRESS_DENIED', step: 'step_2' },
    });
    expect(result.outcome.error?.message).toMatch(/localhost:9 is not in the egress policy/);
  });

  it('fails a throwing code step with CODE_STEP_FAILED', async () => {
    const flow: FlowDefinition = {
      trigger: SEEDED_FLOW.trigger,
      steps: [{ type: 'code', name: 'step_1', code: "throw new Error('boom');", input: {} }],
    };
    const result = await harness.runner.run(await harness.job('run-throw', { flow }));
    expect(result.outcome).toMatchObject({
      status: 'FAILED',
      error: { code: 'CODE_STEP_FAILED', step: 'step_1' },
    });
  });
});

describe('EXECUTION_MODE=SANDBOXED with cold engines', () => {
  let harness: WorkerHarness;

  beforeAll(async () => {
    harness = await startWorkerHarness({
      sandbox: { reuse: false, prewarm: true },
      executionMode: 'SANDBOXED',
    });
  });

  afterAll(async () => {
    await harness.close();
  });

  it('runs each job in a fresh sandboxed engine', async () => {
    for (const runId of ['run-cold-1', 'run-cold-2']) {
      const result = await harness.runner.run(await harness.job(runId));
      expect(result.outcome.status, runId).toBe('SUCCEEDED');
    }
    const pids = harness.booted.map((engine) => engine.pid);
    expect(new Set(pids).size).toBe(pids.length);
    expect(pids.length).toBeGreaterThanOrEqual(2);
  });
});

describe('RUN_ISOLATION=isolate with ISOLATE_MAX_RUNS=2', () => {
  it('the engine gives every third run a fresh isolate, and says so', async () => {
    const { logger, lines } = recordingLogger();
    const harness = await startWorkerHarness({
      sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 512 * 1024 * 1024, isolate: { prewarm: false } },
      isolateMaxRuns: 2,
      logger,
    });
    try {
      for (const runId of ['run-a', 'run-b', 'run-c', 'run-d', 'run-e']) {
        const result = await harness.runner.run(await harness.job(runId));
        expect(result.outcome.status).toBe('SUCCEEDED');
      }
      // Recycled after runs 2 and 4 (then a fresh one made between jobs), by the one engine.
      const recycled = lines.filter((line) => line.msg === 'recycled a run isolate');
      expect(recycled.map((line) => [line.reason, line.runs])).toEqual([
        ['max-runs', 2],
        ['max-runs', 2],
      ]);
      expect(harness.booted).toHaveLength(1);
    } finally {
      await harness.close();
    }
  });
});
