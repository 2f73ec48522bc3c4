import { SEEDED_FLOW } from '@flowbox/engine/testing';
import { defer } from '@flowbox/node-kit';
import {
  type FlowDefinition,
  FlowResponseReportSchema,
  type JobResult,
  JobResultSchema,
} from '@flowbox/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import { processExists, recordingLogger } from '../src/test-helpers.ts';
import { sha256Hex } from './artifact-store.ts';
import { startWorkerHarness, type WorkerHarness } from './worker-harness.ts';

const MB = 1024 * 1024;
let harness: WorkerHarness;

afterEach(async () => {
  await harness.close();
});

const warm = () => startWorkerHarness({ sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 512 * MB } });

const loopingFlow: FlowDefinition = {
  trigger: SEEDED_FLOW.trigger,
  steps: [{ type: 'code', name: 'step_1', code: 'while (true) {}', input: {} }],
};

/** The parts of the latency anatomy are measured inside the worker's busy time. */
function expectTimingsAddUp(result: JobResult): void {
  const { timings } = result;
  const parts = timings.provision;
  expect(parts).toBeDefined();
  if (parts === undefined) return;
  expect(timings.provisionMs).toBeCloseTo(parts.bundleMs + parts.piecesMs + parts.engineMs, 6);
  for (const value of Object.values(timings)) {
    if (typeof value === 'number') expect(value).toBeGreaterThanOrEqual(0);
  }
  const measured = timings.provisionMs + timings.bootMs + timings.runMs + timings.logPersistMs;
  expect(measured).toBeLessThanOrEqual(timings.workerBusyMs);
}

describe('job runner', () => {
  it('provisions, runs the seeded flow on the installed engine and reports its latency anatomy', async () => {
    const { logger, lines } = recordingLogger();
    harness = await startWorkerHarness({
      sandbox: { reuse: true, maxJobs: 1000, maxRssBytes: 512 * MB },
      logger,
    });
    const result = JobResultSchema.parse(await harness.runner.run(await harness.job('run-1')));

    expect(result).toMatchObject({
      workerId: 'worker-test',
      jobId: 'job-run-1',
      runId: 'run-1',
      outcome: { status: 'SUCCEEDED' },
    });
    expect(result.outcome.error).toBeUndefined();
    expect(result.provisioning).toEqual({
      bundle: 'miss',
      pieceHits: 0,
      pieceMisses: 2,
      engine: { pid: harness.booted[0]?.pid, jobsServed: 1, preBooted: false },
    });
    expect(result.timings.bootMs).toBeGreaterThan(0);
    expect(result.timings.runMs).toBeGreaterThan(0);
    expectTimingsAddUp(result);

    const response = harness.app.requests.find((r) => r.url === '/v1/engine/runs/run-1/response');
    expect(FlowResponseReportSchema.parse(response?.json).response).toEqual({
      status: 200,
      headers: {},
      body: { result: 6 },
    });
    // The log's upload follows the result, in the engine.
    await harness.runner.logsSettled();
    expect(harness.app.requests.some((r) => r.method === 'POST' && r.url.includes('runs/run-1.json'))).toBe(
      true,
    );

    // One structured line per job, carrying the same anatomy.
    const finished = lines.filter((line) => line.msg === 'job finished');
    expect(finished).toHaveLength(1);
    expect(finished[0]).toMatchObject({
      runId: 'run-1',
      jobId: 'job-run-1',
      status: 'SUCCEEDED',
      timings: result.timings,
      provisioning: result.provisioning,
    });
  });

  it('serves the second run from the cache, without an S3 request, on the same engine', async () => {
    harness = await warm();
    await harness.runner.run(await harness.job('run-1'));
    const fetched = harness.requests.length;
    expect(fetched).toBe(3);

    const second = await harness.runner.run(await harness.job('run-2'));
    expect(second.outcome.status).toBe('SUCCEEDED');
    expect(harness.requests).toHaveLength(fetched);
    expect(second.provisioning).toMatchObject({ bundle: 'hit', pieceHits: 2, pieceMisses: 0 });
    expect(second.timings.bootMs).toBe(0);
    expectTimingsAddUp(second);
  });

  it('refuses a tampered bundle with ARTIFACT_INTEGRITY: no engine boots, no step runs', async () => {
    harness = await warm();
    const job = await harness.job('run-1');
    const tampered = Buffer.from('{"version":1,"flowId":"evil"}');
    job.bundle = await harness.store.publishRaw(
      `bundles/${job.flowVersionId}/${job.bundle.sha256}.json`,
      tampered,
      {
        sha256: job.bundle.sha256,
        sizeBytes: tampered.byteLength,
      },
    );

    const result = await harness.runner.run(job);

    expect(result.outcome.status).toBe('INTERNAL_ERROR');
    expect(result.outcome.error?.code).toBe('ARTIFACT_INTEGRITY');
    expect(result.outcome.error?.message).toContain(job.bundle.sha256);
    expect(result.outcome.error?.message).toContain(sha256Hex(tampered));
    expect(result.provisioning).toBeUndefined();
    expect(result.timings.runMs).toBe(0);
    expect(harness.booted).toHaveLength(0);
    expect(harness.app.requests).toEqual([]);
  });

  it('kills an engine past the flow timeout (TIMEOUT, FLOW_TIMEOUT) and boots a new one at once', async () => {
    harness = await warm();
    await harness.runner.run(await harness.job('run-0'));
    const firstPid = harness.runner.enginePid;

    const timedOut = await harness.runner.run(
      await harness.job('run-1', {
        flow: loopingFlow,
        limits: { flowTimeoutMs: 500, codeStepTimeoutMs: 60_000 },
      }),
    );

    expect(timedOut.outcome.status).toBe('TIMEOUT');
    expect(timedOut.outcome.error).toMatchObject({ code: 'FLOW_TIMEOUT' });
    expect(harness.runner.enginePid).toBeUndefined();
    expect(firstPid !== undefined && processExists(firstPid)).toBe(false);

    // The replacement boots while the worker is idle (warm-engine-supply.ts), not on the next job.
    const replacement = await harness.bootedEngine(1);
    const next = await harness.runner.run(await harness.job('run-2'));
    expect(next.outcome.status).toBe('SUCCEEDED');
    expect(next.provisioning?.engine).toMatchObject({ pid: replacement.pid, jobsServed: 1, preBooted: true });
    expect(harness.runner.enginePid).not.toBe(firstPid);
    expect(harness.booted).toHaveLength(2);
  });

  it('reports INTERNAL_ERROR with ENGINE_CRASHED when the engine dies mid-job, and recovers', async () => {
    harness = await warm();
    // Hold the response callback open so the engine is stuck mid-run when it is killed.
    const held = defer<number>();
    harness.app.setResponder((r) => (r.url === '/v1/engine/runs/run-1/response' ? held.promise : 204));
    const running = harness.runner.run(await harness.job('run-1'));
    const report = await harness.app.waitForRequest((r) => r.url === '/v1/engine/runs/run-1/response');
    expect(FlowResponseReportSchema.parse(report.json).response.body).toEqual({ result: 6 });
    const pid = harness.runner.enginePid;
    if (pid === undefined) throw new Error('no engine is running');

    process.kill(pid, 'SIGKILL');
    const result = await running;
    held.resolve(204);

    expect(result.outcome.status).toBe('INTERNAL_ERROR');
    expect(result.outcome.error).toMatchObject({ code: 'ENGINE_CRASHED' });
    expect(result.outcome.error?.message).toMatch(/SIGKILL/);

    const next = await harness.runner.run(await harness.job('run-2'));
    expect(next.outcome.status).toBe('SUCCEEDED');
    expect(harness.runner.enginePid).not.toBe(pid);
  });

  it('passes the flow result through: a failing step is FAILED with its code, the engine is kept', async () => {
    harness = await warm();
    const flow: FlowDefinition = {
      trigger: SEEDED_FLOW.trigger,
      steps: [{ type: 'code', name: 'step_1', code: "throw new Error('boom');", input: {} }],
    };
    const result = await harness.runner.run(await harness.job('run-1', { flow }));
    expect(result.outcome).toMatchObject({
      status: 'FAILED',
      // The user's line and column follow the message.
      error: {
        code: 'CODE_STEP_FAILED',
        step: 'step_1',
        message: expect.stringMatching(/^boom \(line 1, column \d+\)$/),
      },
    });
    expect(harness.runner.enginePid).toBe(result.provisioning?.engine.pid);
  });
});
