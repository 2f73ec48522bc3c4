import { type FakeAppServer, SEEDED_FLOW, startFakeAppServer } from '@flowbox/engine/testing';
import { defer } from '@flowbox/node-kit';
import { type FlowDefinition, FlowResponseReportSchema, StepReportSchema } from '@flowbox/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { startEngineProcess } from './engine-process.ts';
import { createWarmEngineSupply } from './engine-supply.ts';
import { defaultEngineEntry } from './env.ts';
import { createJobRunner, type JobRunner } from './job-runner.ts';
import { makeDispatchedJob, processExists, silentLogger } from './test-helpers.ts';

let app: FakeAppServer;
let runner: JobRunner;
const enginePids = new Set<number>();

beforeEach(async () => {
  app = await startFakeAppServer();
  const logger = silentLogger();
  const engines = createWarmEngineSupply(async () => {
    const engine = await startEngineProcess({ entry: defaultEngineEntry(), logger });
    enginePids.add(engine.pid);
    return engine;
  });
  runner = createJobRunner({ appUrl: app.url, workerId: 'worker-test', logger, engines });
});

afterEach(async () => {
  await runner.close();
  await app.close();
  // No engine may outlive its test.
  for (const pid of enginePids) expect(processExists(pid), `engine ${pid} leaked`).toBe(false);
  enginePids.clear();
});

const loopingFlow: FlowDefinition = {
  trigger: SEEDED_FLOW.trigger,
  steps: [{ type: 'code', name: 'step_1', code: 'while (true) {}', input: {} }],
};

describe('job runner', () => {
  it('runs the seeded flow on a real engine and reports timings', async () => {
    const result = await runner.run(makeDispatchedJob(app, 'run-1'));

    expect(result).toMatchObject({
      version: 1,
      type: 'job-result',
      workerId: 'worker-test',
      jobId: 'job-run-1',
      runId: 'run-1',
      status: 'SUCCEEDED',
    });
    expect(result.error).toBeUndefined();
    expect(result.timings.provisionMs).toBe(0);
    expect(result.timings.bootMs).toBeGreaterThan(0);
    expect(result.timings.runMs).toBeGreaterThan(0);
    expect(result.timings.workerBusyMs).toBeGreaterThanOrEqual(result.timings.bootMs + result.timings.runMs);

    const response = app.requests.find((r) => r.url === '/v1/engine/runs/run-1/response');
    expect(FlowResponseReportSchema.parse(response?.json).response).toEqual({
      status: 200,
      headers: {},
      body: { result: 6 },
    });
    expect(app.requests.some((r) => r.method === 'PUT' && r.url.includes('runs/run-1.json'))).toBe(true);
  });

  it('reuses the same engine for the next job, with bootMs 0', async () => {
    const first = await runner.run(makeDispatchedJob(app, 'run-1'));
    const firstPid = runner.enginePid;
    const second = await runner.run(makeDispatchedJob(app, 'run-2'));

    expect([first.status, second.status]).toEqual(['SUCCEEDED', 'SUCCEEDED']);
    expect(firstPid).toBeDefined();
    expect(runner.enginePid).toBe(firstPid);
    expect(second.timings.bootMs).toBe(0);
    expect(enginePids.size).toBe(1);
  });

  it('kills an engine past the flow timeout (TIMEOUT, FLOW_TIMEOUT) and boots a new one next', async () => {
    await runner.run(makeDispatchedJob(app, 'run-0'));
    const firstPid = runner.enginePid;

    const timedOut = await runner.run(
      makeDispatchedJob(app, 'run-1', {
        flow: loopingFlow,
        limits: { flowTimeoutMs: 500, codeStepTimeoutMs: 60_000 },
      }),
    );

    expect(timedOut.status).toBe('TIMEOUT');
    expect(timedOut.error).toMatchObject({ code: 'FLOW_TIMEOUT' });
    expect(runner.enginePid).toBeUndefined();
    expect(firstPid !== undefined && processExists(firstPid)).toBe(false);

    const next = await runner.run(makeDispatchedJob(app, 'run-2'));
    expect(next.status).toBe('SUCCEEDED');
    expect(next.timings.bootMs).toBeGreaterThan(0);
    expect(runner.enginePid).toBeDefined();
    expect(runner.enginePid).not.toBe(firstPid);
  });

  it('reports FAILED with ENGINE_CRASHED when the engine dies mid-job, and recovers', async () => {
    // Hold the first step report open so the engine is stuck mid-run when it is killed.
    const held = defer<number>();
    app.setResponder((r) =>
      r.url === '/v1/engine/runs/run-1/steps' ? held.promise : r.method === 'PUT' ? 200 : 204,
    );
    const running = runner.run(makeDispatchedJob(app, 'run-1'));
    const report = await app.waitForRequest((r) => r.url === '/v1/engine/runs/run-1/steps');
    expect(StepReportSchema.parse(report.json).step.name).toBe('trigger');
    const pid = runner.enginePid;
    if (pid === undefined) throw new Error('no engine is running');

    process.kill(pid, 'SIGKILL');
    const result = await running;
    held.resolve(204);

    expect(result.status).toBe('FAILED');
    expect(result.error).toMatchObject({ code: 'ENGINE_CRASHED' });
    expect(result.error?.message).toMatch(/SIGKILL/);

    const next = await runner.run(makeDispatchedJob(app, 'run-2'));
    expect(next.status).toBe('SUCCEEDED');
    expect(runner.enginePid).not.toBe(pid);
  });

  it('passes the flow result through: a failing step is FAILED with its code', async () => {
    const flow: FlowDefinition = {
      trigger: SEEDED_FLOW.trigger,
      steps: [{ type: 'code', name: 'step_1', code: "throw new Error('boom');", input: {} }],
    };
    const result = await runner.run(makeDispatchedJob(app, 'run-1', { flow }));
    expect(result).toMatchObject({
      status: 'FAILED',
      error: { code: 'CODE_STEP_FAILED', step: 'step_1', message: 'boom' },
    });
    // A flow failure leaves the engine healthy: it is kept.
    expect(runner.enginePid).toBeDefined();
  });
});
