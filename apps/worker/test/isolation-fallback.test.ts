import { SEEDED_FLOW } from '@flowbox/engine/testing';
import type { ExecutionMode, FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

/** A code step that says where it ran: a run's isolate has TextEncoder, the engine's code-step context none. */
const WHERE: FlowDefinition = {
  trigger: SEEDED_FLOW.trigger,
  steps: [{ type: 'code', name: 'step_1', code: 'return typeof TextEncoder;', input: {} }],
};

/**
 * RUN_ISOLATION=isolate follows what the app says of each job's flow: `process` (a piece needs
 * Node) gets a fresh engine that never ran another job, under the worker's EXECUTION_MODE;
 * `shared` (such pieces all trusted) runs in the reused engine's realm; the rest in an isolate.
 */
describe.each<ExecutionMode>(['SANDBOX_CODE_ONLY', 'SANDBOXED'])(
  'RUN_ISOLATION=isolate, EXECUTION_MODE=%s: the fallback for flows that need Node',
  (executionMode) => {
    let harness: WorkerHarness;

    beforeAll(async () => {
      harness = await startWorkerHarness({
        sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 512 * 1024 * 1024, isolate: { prewarm: false } },
        executionMode,
      });
    });

    afterAll(async () => {
      await harness.close();
    });

    it('runs a job in an isolate when the job says nothing or isolate, and records it', async () => {
      const first = await harness.runner.run(await harness.job('run-isolate-1', { flow: WHERE }));
      const second = await harness.runner.run({
        ...(await harness.job('run-isolate-2', { flow: WHERE })),
        isolation: 'isolate',
      });
      for (const result of [first, second]) {
        expect(result.outcome.steps[1]?.output).toBe('function');
        expect(result.isolation).toBe('isolate');
      }
      expect(second.provisioning?.engine).toMatchObject({
        pid: first.provisioning?.engine.pid,
        jobsServed: 2,
      });
    });

    it('runs each job that needs a process in a fresh engine, and the next isolate job in the warm one', async () => {
      const warmPid = harness.booted[0]?.pid;
      const bootedBefore = harness.booted.length;
      const fallback = [];
      for (const runId of ['run-process-1', 'run-process-2']) {
        const job = { ...(await harness.job(runId, { flow: WHERE })), isolation: 'process' as const };
        fallback.push(await harness.runner.run(job));
      }
      for (const result of fallback) {
        expect(result.outcome.status).toBe('SUCCEEDED');
        expect(result.outcome.steps[1]?.output).toBe('undefined');
        expect(result.isolation).toBe('process');
        expect(result.provisioning?.engine.jobsServed).toBe(1);
        expect(result.provisioning?.engine.pid).not.toBe(warmPid);
      }
      // Two engines booted for them, one each, none of them the warm one.
      expect(harness.booted.length).toBe(bootedBefore + 2);
      expect(
        harness.booted.slice(bootedBefore).every((engine) => !engine.alive || engine.jobsServed === 1),
      ).toBe(true);
      const after = await harness.runner.run(await harness.job('run-isolate-3', { flow: WHERE }));
      expect(after.isolation).toBe('isolate');
      expect(after.provisioning?.engine.pid).toBe(warmPid);
    });

    it("runs a job whose Node pieces are trusted in the warm engine's realm", async () => {
      const warmPid = harness.booted[0]?.pid;
      const result = await harness.runner.run({
        ...(await harness.job('run-shared', { flow: WHERE })),
        isolation: 'shared',
      });
      expect(result.outcome.steps[1]?.output).toBe('undefined');
      expect(result.isolation).toBe('shared');
      expect(result.provisioning?.engine.pid).toBe(warmPid);
    });
  },
);
