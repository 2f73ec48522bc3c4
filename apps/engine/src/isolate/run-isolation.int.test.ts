import { FlowResponseReportSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness, withCodeStep } from '../../test/support/flow-executor-harness.ts';
import { isUpload, SEEDED_FLOW } from '../../test/support/index.ts';

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

  it('reads {{connections.x}} inside the isolate and the engine redacts what leaves the run', async () => {
    const secret = 'sk-isolate-test-5e4d3c2b';
    const flow = withCodeStep({
      code: "console.log('using', inputs.token); return { echoed: inputs.token };",
      input: { token: '{{connections.api}}' },
    });
    const job = await h.job(flow, { isolation: 'isolate', connections: { api: secret } });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(outcome.steps[2]?.output).toEqual({ echoed: '[connection:api]' });
    expect(JSON.stringify(outcome.steps[2]?.logs)).toContain('using [connection:api]');
    const shown = JSON.stringify([h.stepReports(), h.app.requests.find(isUpload)?.json, outcome]);
    expect(shown).not.toContain(secret);
    // The flow's own answer is not redacted (as in the engine's realm).
    const [response] = h.posts('response');
    expect(FlowResponseReportSchema.parse(response?.json).response.body).toEqual({ echoed: secret });
  });

  it('made ahead by a preload: the first run takes the context built before it came', async () => {
    const job = await h.job(SEEDED_FLOW, { isolation: 'isolate' });
    await h.runIsolation.prepare({ pieces: job.pieces, memoryMb: job.limits.codeStepMemoryMb });
    // The snapshot, an isolate from it and a blank context, before any job.
    expect(h.runIsolation.counts()).toEqual({ isolates: 1, contexts: 1, runs: 0 });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    // The run made neither an isolate nor a context of its own.
    expect(h.runIsolation.counts()).toEqual({ isolates: 1, contexts: 1, runs: 1 });
  });

  it('a preload for other pieces or another limit than the job: the job starts its own', async () => {
    const job = await h.job(SEEDED_FLOW, { isolation: 'isolate' });
    await h.runIsolation.prepare({ pieces: job.pieces, memoryMb: job.limits.codeStepMemoryMb * 2 });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(h.runIsolation.counts()).toEqual({ isolates: 2, contexts: 2, runs: 1 });
  });
});
