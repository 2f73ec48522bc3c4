import { type ExecutionMode, FlowResponseReportSchema, RunLogSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { useExecutorHarness, withCodeStep } from '../../test/support/flow-executor-harness.ts';
import { isUpload, makeEngineJob, prepareEngineArtifacts, SEEDED_FLOW } from '../../test/support/index.ts';

const h = useExecutorHarness();

describe.each(['SANDBOX_CODE_ONLY', 'UNSANDBOXED'] satisfies ExecutionMode[])('flow executor, %s', (mode) => {
  it('runs the seeded flow: response {result:6} with the steps before it, then the uploaded log', async () => {
    const { outcome, timings } = await h.executor.execute(await h.job(SEEDED_FLOW, { executionMode: mode }));

    expect(outcome).toMatchObject({ status: 'SUCCEEDED', logKey: 'runs/run-1.json' });
    expect(outcome.error).toBeUndefined();
    expect(timings.runMs).toBeGreaterThan(0);
    expect(timings.logPersistMs).toBeGreaterThan(0);

    // The worker's result carries every step: it is what records the run.
    const { steps } = outcome;
    expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['trigger', 'webhook/catch_webhook', 'SUCCEEDED'],
      ['step_1', 'math-helper/addition_math', 'SUCCEEDED'],
      ['step_2', 'code', 'SUCCEEDED'],
      ['step_3', 'webhook/return_response', 'SUCCEEDED'],
    ]);
    expect(steps[0]?.output).toMatchObject({ method: 'POST', body: { hello: 'world' } });
    expect(steps[1]?.output).toEqual({ result: 5 });
    expect(steps[2]).toMatchObject({ input: { sum: 5 }, output: { result: 6 } });
    expect(steps[3]?.input).toEqual({ status: 200, headers: {}, body: { result: 6 } });

    const [response] = h.posts('response');
    const report = FlowResponseReportSchema.parse(response?.json);
    const flowResponse = report.response;
    expect(flowResponse).toEqual({ status: 200, headers: {}, body: { result: 6 } });
    // The response is the flow's last step: its worker may take its next job meanwhile.
    expect(report.last).toBe(true);
    expect(JSON.stringify(flowResponse.body)).toBe('{"result":6}');

    const upload = h.app.requests.find(isUpload);
    expect(upload?.method).toBe('POST');
    expect(upload?.url).toBe('/s3/flowbox-logs/runs/run-1.json?X-Amz-Signature=fake');
    expect(upload?.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
    expect(upload?.headers['content-length']).toBe(String(Buffer.byteLength(upload?.body ?? '')));
    // The policy's fields first, in order, then the log as `file`.
    expect(Object.keys(upload?.form ?? {})).toEqual(['key', 'file']);
    expect(upload?.form?.key).toBe('runs/run-1.json');
    const log = RunLogSchema.parse(upload?.json);
    expect(log).toMatchObject({ runId: 'run-1', flowId: 'flow-1', status: 'SUCCEEDED' });
    expect(log.steps).toEqual(steps);

    // The app heard of the steps before the response, once each (progress reports go out only
    // past the interval: the first run of a fresh engine may be that slow, a warm one is not).
    expect(h.stepReports()).toEqual(steps.slice(0, 3));
    // Then the log; the run's end goes to the worker, not through another callback.
    const order = h.app.requests
      .map((r) => `${r.method} ${r.url.split('?')[0]?.split('/').pop()}`)
      .filter((call) => call !== 'POST steps');
    expect(order).toEqual(['POST response', 'POST run-1.json']);
    for (const post of h.app.requests.filter((r) => !isUpload(r))) {
      expect(post.headers.authorization).toBe('Bearer engine-token-1');
      expect(post.headers['content-type']).toBe('application/json');
    }
  });

  it('says the response is not the last step when one follows it, and runs that step', async () => {
    const flow = structuredClone(SEEDED_FLOW);
    const [math] = flow.steps;
    if (math === undefined) throw new Error('the seeded flow changed');
    flow.steps.push({ ...structuredClone(math), name: 'step_4' });

    const { outcome } = await h.executor.execute(await h.job(flow, { executionMode: mode }));

    expect(outcome.status).toBe('SUCCEEDED');
    expect(outcome.steps.map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3', 'step_4']);
    const [response] = h.posts('response');
    expect(FlowResponseReportSchema.parse(response?.json).last).toBe(false);
  });

  it('ends FAILED at the first failing step, naming it, and runs nothing after it', async () => {
    const flow = withCodeStep({ code: "throw new Error('boom');" });
    const { outcome } = await h.executor.execute(await h.job(flow, { executionMode: mode }));

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({
      code: 'CODE_STEP_FAILED',
      step: 'step_2',
      message: 'boom (line 1, column 7)',
    });
    expect(outcome.steps.map((s) => [s.name, s.status])).toEqual([
      ['trigger', 'SUCCEEDED'],
      ['step_1', 'SUCCEEDED'],
      ['step_2', 'FAILED'],
    ]);
    // A fast flow with no response makes no callback: its end reaches the app with the result.
    expect(h.app.requests.filter((r) => !isUpload(r))).toHaveLength(0);
  });

  it("records a code step's console in its step, and a refused fetch as the run's error", async () => {
    const flow = withCodeStep({
      code: "console.log('calling', inputs.sum); console.warn('careful'); return await fetch('http://127.0.0.1:9/');",
    });
    // The job's policy allows public hosts only, so loopback is refused before any connection.
    const job = await h.job(flow, { executionMode: mode, egress: { allowPublic: true, named: [] } });
    const { outcome } = await h.executor.execute(job);

    expect(outcome.error).toMatchObject({ code: 'EGRESS_DENIED', step: 'step_2' });
    expect(outcome.error?.message).toMatch(/loopback/);
    const codeStep = outcome.steps[2];
    expect(codeStep).toMatchObject({ status: 'FAILED' });
    expect(codeStep?.logs).toEqual([
      { level: 'log', message: 'calling 5' },
      { level: 'warn', message: 'careful' },
    ]);
    // The step that passed printed nothing and has no `logs` at all.
    expect(outcome.steps[1]).not.toHaveProperty('logs');
  });

  it('does not let a code step change the output it was given', async () => {
    const flow = withCodeStep({
      code: 'inputs.step.result = 99; return inputs.step;',
      input: { step: '{{step_1}}' },
    });
    const { steps } = (await h.executor.execute(await h.job(flow, { executionMode: mode }))).outcome;
    expect(steps[1]?.output).toEqual({ result: 5 });
    expect(steps[2]).toMatchObject({ input: { step: { result: 5 } }, output: { result: 99 } });
  });
});

describe('flow executor', () => {
  it('gives a code step undefined for a template naming a step that did not run', async () => {
    const { outcome } = await h.executor.execute(
      await h.job(
        withCodeStep({ code: 'return { sum: inputs.sum ?? "none" };', input: { sum: '{{step_9.result}}' } }),
      ),
    );

    expect(outcome.status).toBe('SUCCEEDED');
    expect(outcome.steps[2]).toMatchObject({ input: {}, output: { sum: 'none' } });
  });

  it('fails a step whose template is not one with TEMPLATE_ERROR naming step, field and template', async () => {
    const { outcome } = await h.executor.execute(
      await h.job(withCodeStep({ input: { sum: 'x{{step_1..result}}' } })),
    );

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'TEMPLATE_ERROR', step: 'step_2' });
    expect(outcome.error?.message).toBe(
      "step 'step_2', input.sum: template {{step_1..result}}: the path 'step_1..result' has an empty segment",
    );
    expect(outcome.steps[2]?.input).toEqual({ sum: 'x{{step_1..result}}' });
  });

  it('fails a step with an unknown piece', async () => {
    const flow = structuredClone(SEEDED_FLOW);
    flow.steps[0] = { type: 'piece', name: 'step_1', piece: 'nope', action: 'x', input: {} };
    const { outcome } = await h.executor.execute(await h.job(flow));
    expect(outcome.error).toMatchObject({
      code: 'STEP_FAILED',
      step: 'step_1',
      message: "unknown piece 'nope'",
    });
  });

  it('finishes with logKey null and logError when the upload is refused', async () => {
    h.app.setResponder((r) => (isUpload(r) ? 403 : 204));

    const { outcome } = await h.executor.execute(await h.job());

    expect(outcome).toMatchObject({
      status: 'SUCCEEDED',
      logKey: null,
      logError: { code: 'LOG_UPLOAD_FAILED', message: expect.stringMatching(/403/) },
    });
  });

  it("leaves out of the log an output that would not fit, keeping the run, its result and the next step's input", async () => {
    const logUpload = {
      url: h.app.logUploadUrl('runs/run-1.json'),
      fields: {},
      key: 'runs/run-1.json',
      maxBytes: 64 * 1024,
    };
    const flow = withCodeStep({
      code: "return { result: 'x'.repeat(200_000).length, big: 'x'.repeat(200_000) };",
    });
    const { outcome } = await h.executor.execute(await h.job(flow, { logUpload }));
    expect(outcome.status).toBe('SUCCEEDED');
    const big = outcome.steps.find((s) => s.name === 'step_2');
    expect(big).toMatchObject({
      status: 'SUCCEEDED',
      output: { dropped: expect.stringMatching(/^2000\d\d bytes/) },
    });
    // The scope kept the real output: the response step read it, and the caller got all of it.
    const [response] = h.posts('response');
    const answer = FlowResponseReportSchema.parse(response?.json).response.body as { big: string };
    expect(answer.big).toHaveLength(200_000);
    // What the run reports and stores stays within the limit, and says what it left out.
    expect(outcome.logKey).toBe('runs/run-1.json');
    expect(Buffer.byteLength(JSON.stringify(outcome.steps))).toBeLessThan(64 * 1024);
    const stored = h.app.requests.find(isUpload);
    expect(RunLogSchema.parse(stored?.json).dropped).toBe(2);
  });

  it('refuses to upload a log over maxBytes', async () => {
    const logUpload = {
      url: h.app.logUploadUrl('runs/run-1.json'),
      fields: {},
      key: 'runs/run-1.json',
      maxBytes: 64,
    };
    const { outcome } = await h.executor.execute(await h.job(SEEDED_FLOW, { logUpload }));
    expect(outcome.logKey).toBeNull();
    expect(h.app.requests.filter(isUpload)).toHaveLength(0);
    expect(outcome.logError).toMatchObject({
      code: 'LOG_UPLOAD_FAILED',
      message: expect.stringMatching(/64/),
    });
  });

  it('ends INTERNAL_ERROR when the response callback fails', async () => {
    h.app.setResponder((r) => (r.url.endsWith('/response') ? 502 : 204));

    const { outcome } = await h.executor.execute(await h.job());

    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error).toMatchObject({ code: 'CALLBACK_FAILED', step: 'step_3' });
  });

  it('ends INTERNAL_ERROR when the app cannot be reached', async () => {
    const artifacts = await prepareEngineArtifacts(h.dir);
    const { outcome } = await h.executor.execute(
      makeEngineJob('http://127.0.0.1:1', h.app.logUploadUrl('k'), artifacts),
    );
    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error?.code).toBe('CALLBACK_FAILED');
  });
});

describe.each(['SANDBOX_CODE_ONLY', 'UNSANDBOXED'] satisfies ExecutionMode[])(
  'flow executor progress reports, %s',
  (mode) => {
    // Reports as often as possible, as a long flow would past each interval.
    const hp = useExecutorHarness({ progressIntervalMs: 0 });

    it('reports every step once, in order, through progress reports and the response', async () => {
      const { outcome } = await hp.executor.execute(await hp.job(SEEDED_FLOW, { executionMode: mode }));
      expect(outcome.status).toBe('SUCCEEDED');
      expect(hp.posts('steps').length).toBeGreaterThan(0);
      expect(hp.stepReports().map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);
      expect(hp.stepReports()).toEqual(outcome.steps);
    });

    it('ends INTERNAL_ERROR with CALLBACK_FAILED when the app refuses a progress report', async () => {
      hp.app.setResponder((r) => (r.method === 'POST' && r.url.endsWith('/steps') ? 500 : 204));

      const { outcome } = await hp.executor.execute(await hp.job(SEEDED_FLOW, { executionMode: mode }));

      expect(outcome.status).toBe('INTERNAL_ERROR');
      expect(outcome.error).toMatchObject({ code: 'CALLBACK_FAILED', message: expect.stringMatching(/500/) });
      // Nothing more is sent once a report was refused.
      expect(hp.posts('steps')).toHaveLength(1);
      expect(hp.app.requests.filter((r) => r.url.endsWith('/response'))).toHaveLength(0);
    });
  },
);

describe('flow executor, a run with connections', () => {
  it('resolves {{connections.x}} for the step and redacts the value from all that leaves the run', async () => {
    const secret = 'sk-engine-test-9a8b7c6d';
    const flow = withCodeStep({
      code: "console.log('using', inputs.token); if (inputs.fail) throw new Error('bad ' + inputs.token); return { echoed: inputs.token, field: inputs.user };",
      input: { token: '{{connections.api}}', user: '{{connections.db.user}}', fail: false },
    });
    const job = await h.job(flow, { connections: { api: secret, db: { user: 'service-account-1' } } });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    const code = outcome.steps[2];
    expect(code?.output).toEqual({ echoed: '[connection:api]', field: '[connection:db]' });
    expect(code?.input).toEqual({ token: '[connection:api]', user: '[connection:db]', fail: false });
    expect(JSON.stringify(code?.logs)).toContain('using [connection:api]');
    // The steps the app heard of and the uploaded log; the response is the flow's own answer
    // (the seeded flow answers with the code step's output) and is not redacted.
    const shown = JSON.stringify([h.stepReports(), h.app.requests.find(isUpload)?.json]);
    expect(shown).toContain('[connection:api]');
    expect(shown).not.toContain(secret);
    expect(shown).not.toContain('service-account-1');
    const [response] = h.posts('response');
    expect(FlowResponseReportSchema.parse(response?.json).response.body).toEqual({
      echoed: secret,
      field: 'service-account-1',
    });
    expect(JSON.stringify(outcome)).not.toContain(secret);
  });

  it('redacts the value from a failing step error', async () => {
    const secret = 'sk-engine-test-failing-01';
    const flow = withCodeStep({
      code: "throw new Error('bad ' + inputs.token);",
      input: { token: '{{connections.api}}' },
    });
    const { outcome } = await h.executor.execute(await h.job(flow, { connections: { api: secret } }));
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error?.message).toContain('bad [connection:api]');
    expect(JSON.stringify(outcome)).not.toContain(secret);
    expect(h.app.requests.map((r) => r.body).join('\n')).not.toContain(secret);
  });
});
