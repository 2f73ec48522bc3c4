import {
  FlowResponseReportSchema,
  RunFinishedReportSchema,
  RunLogSchema,
  StepReportSchema,
} from '@flowbox/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createCodeRunner } from './code-runner.ts';
import { createFlowExecutor, type FlowExecutor } from './flow-executor.ts';
import { createHttpClient, type HttpClient } from './http-client.ts';
import { BUILT_IN_PIECES, createPieceRegistry } from './piece-registry.ts';
import {
  type FakeAppServer,
  makeEngineJob,
  type RecordedRequest,
  SEEDED_FLOW,
  startFakeAppServer,
} from './testing/index.ts';

let app: FakeAppServer;
let http: HttpClient;
let executor: FlowExecutor;

beforeEach(async () => {
  app = await startFakeAppServer();
  http = createHttpClient();
  executor = createFlowExecutor({
    pieces: createPieceRegistry(BUILT_IN_PIECES),
    codeRunner: createCodeRunner({ onCatastrophicError: () => {} }),
    http,
    log: () => {},
  });
});

afterEach(async () => {
  http.close();
  await app.close();
});

const job = (overrides: Parameters<typeof makeEngineJob>[2] = {}) =>
  makeEngineJob(app.url, app.logUploadUrl('runs/run-1.json'), overrides);

const posts = (suffix: string): RecordedRequest[] =>
  app.requests.filter((r) => r.method === 'POST' && r.url === `/v1/engine/runs/run-1/${suffix}`);

const stepReports = () => posts('steps').map((r) => StepReportSchema.parse(r.json).step);
const finishReport = () => {
  const [finish] = posts('finish');
  return RunFinishedReportSchema.parse(finish?.json);
};

describe('flow executor', () => {
  it('runs the seeded flow: callbacks, response {result:6}, uploaded log, then finish', async () => {
    const outcome = await executor.execute(job());

    expect(outcome).toMatchObject({ status: 'SUCCEEDED', logKey: 'runs/run-1.json' });
    expect(outcome.error).toBeUndefined();
    expect(outcome.timings.runMs).toBeGreaterThan(0);
    expect(outcome.timings.logPersistMs).toBeGreaterThan(0);

    const steps = stepReports();
    expect(steps.map((s) => [s.name, s.kind, s.status])).toEqual([
      ['trigger', 'webhook/catch_webhook', 'SUCCEEDED'],
      ['step_1', 'math-helper/addition_math', 'SUCCEEDED'],
      ['step_2', 'code', 'SUCCEEDED'],
      ['step_3', 'webhook/return_response', 'SUCCEEDED'],
    ]);
    expect(steps[0]?.output).toEqual({ hello: 'world' });
    expect(steps[1]?.output).toEqual({ result: 5 });
    expect(steps[2]).toMatchObject({ input: { sum: 5 }, output: { result: 6 } });
    expect(steps[3]?.input).toEqual({ status: 200, headers: {}, body: { result: 6 } });

    const [response] = posts('response');
    const flowResponse = FlowResponseReportSchema.parse(response?.json).response;
    expect(flowResponse).toEqual({ status: 200, headers: {}, body: { result: 6 } });
    expect(JSON.stringify(flowResponse.body)).toBe('{"result":6}');

    const upload = app.requests.find((r) => r.method === 'PUT');
    expect(upload?.url).toBe('/s3/flowbox-logs/runs/run-1.json?X-Amz-Signature=fake');
    expect(upload?.headers['content-type']).toBe('application/json');
    expect(upload?.headers['content-length']).toBe(String(Buffer.byteLength(upload?.body ?? '')));
    const log = RunLogSchema.parse(upload?.json);
    expect(log).toMatchObject({ runId: 'run-1', flowId: 'flow-1', status: 'SUCCEEDED' });
    expect(log.steps).toEqual(steps);

    expect(finishReport()).toEqual({
      version: 1,
      type: 'run-finished',
      status: 'SUCCEEDED',
      logKey: 'runs/run-1.json',
    });

    // The response goes out before its step is reported; the log is stored before finish.
    const order = app.requests.map((r) => `${r.method} ${r.url.split('?')[0]?.split('/').pop()}`);
    expect(order).toEqual([
      'POST steps',
      'POST steps',
      'POST steps',
      'POST response',
      'POST steps',
      'PUT run-1.json',
      'POST finish',
    ]);
    for (const post of app.requests.filter((r) => r.method === 'POST')) {
      expect(post.headers.authorization).toBe('Bearer engine-token-1');
      expect(post.headers['content-type']).toBe('application/json');
    }
  });

  it('ends FAILED at the first failing step, naming it, and runs nothing after it', async () => {
    const flow = structuredClone(SEEDED_FLOW);
    const codeStep = flow.steps[1];
    if (codeStep?.type !== 'code') throw new Error('the seeded flow changed');
    codeStep.code = "throw new Error('boom');";

    const outcome = await executor.execute(job({ flow }));

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'CODE_STEP_FAILED', step: 'step_2', message: 'boom' });
    expect(stepReports().map((s) => [s.name, s.status])).toEqual([
      ['trigger', 'SUCCEEDED'],
      ['step_1', 'SUCCEEDED'],
      ['step_2', 'FAILED'],
    ]);
    expect(posts('response')).toHaveLength(0);
    expect(finishReport()).toMatchObject({
      status: 'FAILED',
      error: { code: 'CODE_STEP_FAILED', step: 'step_2' },
    });
  });

  it('fails a step whose template names an unknown step with TEMPLATE_ERROR', async () => {
    const flow = structuredClone(SEEDED_FLOW);
    const codeStep = flow.steps[1];
    if (codeStep?.type !== 'code') throw new Error('the seeded flow changed');
    codeStep.input = { sum: '{{step_9.result}}' };

    const outcome = await executor.execute(job({ flow }));

    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'TEMPLATE_ERROR', step: 'step_2' });
    expect(outcome.error?.message).toMatch(/step_9/);
    expect(stepReports()[2]?.input).toEqual({ sum: '{{step_9.result}}' });
  });

  it('fails a step with an unknown piece', async () => {
    const flow = structuredClone(SEEDED_FLOW);
    flow.steps[0] = { type: 'piece', name: 'step_1', piece: 'nope', action: 'x', input: {} };
    const outcome = await executor.execute(job({ flow }));
    expect(outcome.error).toMatchObject({
      code: 'STEP_FAILED',
      step: 'step_1',
      message: "unknown piece 'nope'",
    });
  });

  it('finishes with logKey null and logError when the upload is refused', async () => {
    app.setResponder((r) => (r.method === 'PUT' ? 403 : 204));

    const outcome = await executor.execute(job());

    expect(outcome).toMatchObject({ status: 'SUCCEEDED', logKey: null });
    expect(finishReport()).toMatchObject({
      status: 'SUCCEEDED',
      logKey: null,
      logError: { code: 'LOG_UPLOAD_FAILED', message: expect.stringMatching(/403/) },
    });
  });

  it('refuses to upload a log over maxBytes', async () => {
    const outcome = await executor.execute(
      job({ logUpload: { url: app.logUploadUrl('runs/run-1.json'), key: 'runs/run-1.json', maxBytes: 64 } }),
    );
    expect(outcome.logKey).toBeNull();
    expect(app.requests.filter((r) => r.method === 'PUT')).toHaveLength(0);
    expect(finishReport().logError).toMatchObject({
      code: 'LOG_UPLOAD_FAILED',
      message: expect.stringMatching(/64/),
    });
  });

  it('ends INTERNAL_ERROR with CALLBACK_FAILED when the app rejects a step report', async () => {
    app.setResponder((r) =>
      r.method === 'POST' && r.url.endsWith('/steps') ? 500 : r.method === 'PUT' ? 200 : 204,
    );

    const outcome = await executor.execute(job());

    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error).toMatchObject({ code: 'CALLBACK_FAILED', message: expect.stringMatching(/500/) });
    expect(posts('steps')).toHaveLength(1);
    expect(finishReport()).toMatchObject({ status: 'INTERNAL_ERROR', error: { code: 'CALLBACK_FAILED' } });
  });

  it('ends INTERNAL_ERROR when the response callback fails', async () => {
    app.setResponder((r) => (r.url.endsWith('/response') ? 502 : r.method === 'PUT' ? 200 : 204));

    const outcome = await executor.execute(job());

    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error).toMatchObject({ code: 'CALLBACK_FAILED', step: 'step_3' });
  });

  it('ends INTERNAL_ERROR when the app cannot be reached', async () => {
    const outcome = await executor.execute(makeEngineJob('http://127.0.0.1:1', app.logUploadUrl('k')));
    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error?.code).toBe('CALLBACK_FAILED');
  });
});
