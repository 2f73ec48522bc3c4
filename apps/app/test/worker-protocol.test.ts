import { createHash } from 'node:crypto';
import type {
  DispatchedJob,
  EngineReport,
  JobResultAck,
  PollReply,
  RunLog,
  StepResult,
} from '@flowbox/protocol';
import { ENGINE_CALLBACK_PATHS, FlowBundleSchema, wrapCodeStep } from '@flowbox/protocol';
import type { Socket } from 'socket.io-client';
import { describe, expect, it } from 'vitest';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import { RUN_ID_HEADER } from '../src/http/webhook-routes.ts';
import { getRun, postJson } from './app-harness.ts';
import { jobResult } from './run-fixtures.ts';
import { useWorkerProtocolApp } from './socket-workers.ts';

/**
 * Drives the app through its two machine-facing protocols, socket.io for workers (and the engine
 * callbacks they forward) and HTTP for engines, the way a real worker and engine do, without
 * starting them.
 */
describe('worker and engine protocols', () => {
  const h = useWorkerProtocolApp();
  const { connectWorker } = h;

  async function pollJob(socket: Socket): Promise<DispatchedJob> {
    const reply = (await socket
      .timeout(10_000)
      .emitWithAck('poll', { version: 1, type: 'poll', workerId: 'w1' })) as PollReply;
    if (reply.type !== 'job') throw new Error(`expected a job, got ${JSON.stringify(reply)}`);
    return reply.job;
  }

  function callback(
    job: DispatchedJob,
    path: string,
    body: unknown,
    token = job.engineToken,
  ): Promise<Response> {
    return postJson(`${h.url}${path}`, body, { authorization: `Bearer ${token}` });
  }

  function step(name: string, output: unknown): StepResult {
    return {
      name,
      kind: 'test',
      status: 'SUCCEEDED',
      input: {},
      output,
      startedAt: new Date().toISOString(),
      durationMs: 1,
    };
  }

  it('refuses a worker without a valid token', async () => {
    await expect(connectWorker('not-a-token')).rejects.toThrow(/UNAUTHORIZED/);
    const engineToken = h.app.tokens.signEngineToken({ runId: 'r', syncInstanceId: null }, 60);
    await expect(connectWorker(engineToken)).rejects.toThrow(/UNAUTHORIZED/);
  });

  it('carries a sync run from webhook to response, log and final state', async () => {
    const worker = await connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const pending = postJson(`${h.url}/v1/webhooks/benchmark/sync?x=1`, { hello: 'world' });
    const job = await pollJob(worker);
    // The bundle and piece archives download through their presigned URLs and match their hashes.
    const bundleBytes = Buffer.from(await (await fetch(job.bundle.url)).arrayBuffer());
    expect(createHash('sha256').update(bundleBytes).digest('hex')).toBe(job.bundle.sha256);
    const bundle = FlowBundleSchema.parse(JSON.parse(bundleBytes.toString('utf8')));
    expect(bundle.definition).toEqual(BENCHMARK_FLOW);
    expect(bundle.code).toEqual({ step_2: wrapCodeStep('return { result: Number(inputs.sum) + 1 };') });
    expect(job.pieces.map((p) => p.name)).toEqual(['math-helper', 'webhook']);
    // Neither imports a Node built-in: the flow may run in an isolate.
    expect(job.isolation).toBe('isolate');
    for (const piece of job.pieces) {
      const archive = Buffer.from(await (await fetch(piece.url)).arrayBuffer());
      expect(createHash('sha256').update(archive).digest('hex')).toBe(piece.sha256);
      expect(archive.byteLength).toBe(piece.sizeBytes);
    }
    expect(job.trigger.body).toEqual({ hello: 'world' });
    expect(job.trigger.query).toEqual({ x: '1' });
    expect(job.logUpload.key).toBe(`runs/${job.runId}/log.json`);
    expect((await getRun(h.url, job.runId)).status).toBe('RUNNING');

    // Engine tokens are scoped: none, another run's, or garbage are refused and write nothing.
    const otherRun = h.app.tokens.signEngineToken({ runId: crypto.randomUUID(), syncInstanceId: null }, 60);
    const report = { version: 1, type: 'steps', steps: [step('trigger', { hello: 'world' })] };
    expect((await postJson(`${h.url}${ENGINE_CALLBACK_PATHS.steps(job.runId)}`, report)).status).toBe(401);
    expect((await callback(job, ENGINE_CALLBACK_PATHS.steps(job.runId), report, otherRun)).status).toBe(403);
    expect((await callback(job, ENGINE_CALLBACK_PATHS.steps(job.runId), report, 'x.y.z')).status).toBe(401);
    expect(
      (await callback(job, ENGINE_CALLBACK_PATHS.steps(job.runId), { version: 1, type: 'steps', steps: [] }))
        .status,
    ).toBe(400);

    expect((await callback(job, ENGINE_CALLBACK_PATHS.steps(job.runId), report)).status).toBe(204);
    // Progress is visible while the run is in flight, though nothing is written yet.
    expect((await getRun(h.url, job.runId)).steps.map((s) => s.name)).toEqual(['trigger']);
    const response = {
      version: 1,
      type: 'flow-response',
      response: { status: 201, headers: { 'x-custom': 'yes', 'content-length': '999' }, body: { result: 6 } },
      steps: [],
    };
    expect((await callback(job, ENGINE_CALLBACK_PATHS.response(job.runId), response)).status).toBe(204);

    const answer = await pending;
    expect(answer.status).toBe(201);
    expect(answer.headers.get('x-custom')).toBe('yes');
    expect(answer.headers.get(RUN_ID_HEADER)).toBe(job.runId);
    expect(await answer.json()).toEqual({ result: 6 });

    const log: RunLog = {
      version: 1,
      runId: job.runId,
      flowId: job.flowId,
      flowVersionId: job.flowVersionId,
      status: 'SUCCEEDED',
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
      steps: [step('trigger', { hello: 'world' })],
    };
    // The log goes up as the engine sends it: a POST form whose signed policy S3 checks.
    const form = new FormData();
    for (const [name, value] of Object.entries(job.logUpload.fields)) form.append(name, value);
    form.append('file', new Blob([JSON.stringify(log)], { type: 'application/json' }), 'log.json');
    const upload = await fetch(job.logUpload.url, { method: 'POST', body: form });
    expect(upload.status).toBe(204);
    expect((await getRun(h.url, job.runId)).status).toBe('RUNNING');

    // The worker's result is the run's record: steps, log and timings in one write.
    const ack = await worker
      .timeout(5_000)
      .emitWithAck(
        'job-result',
        jobResult(
          job,
          { status: 'SUCCEEDED', steps: log.steps, logKey: job.logUpload.key },
          { isolation: 'isolate' },
        ),
      );
    expect(ack).toEqual({ version: 1, type: 'ok' });
    // Once the run has ended its engine token is good for nothing.
    for (const [path, body] of [
      [ENGINE_CALLBACK_PATHS.steps(job.runId), report],
      [ENGINE_CALLBACK_PATHS.response(job.runId), response],
    ] as const) {
      const refused = await callback(job, path, body);
      expect(refused.status).toBe(403);
      expect(await refused.json()).toMatchObject({ error: { code: 'RUN_ALREADY_FINISHED' } });
    }

    const run = await getRun(h.url, job.runId);
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      logKey: job.logUpload.key,
      workerId: 'w1',
      isolation: 'isolate',
    });
    expect(run.steps).toEqual(
      log.steps.map((s) => expect.objectContaining({ name: s.name, output: s.output })),
    );
    expect(run.timings).toMatchObject({ runMs: 2, workerBusyMs: 4 });
    const downloaded = await fetch(String(run.logUrl));
    expect(downloaded.status).toBe(200);
    expect(await downloaded.json()).toEqual(log);
  });

  it("takes the engine's callbacks from its worker's socket as from HTTP: progress, a refused and a good response", async () => {
    const worker = await connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const pending = postJson(`${h.url}/v1/webhooks/benchmark/sync`, { over: 'socket' });
    const job = await pollJob(worker);
    const forward = (report: EngineReport, token = job.engineToken) =>
      worker.timeout(5_000).emitWithAck('engine-callback', {
        version: 1,
        type: 'engine-callback',
        callback: { runId: job.runId, engineToken: token, report },
      });
    const steps: EngineReport = { version: 1, type: 'steps', steps: [step('trigger', { over: 'socket' })] };

    expect(await forward(steps)).toEqual({ version: 1, type: 'ok' });
    expect((await getRun(h.url, job.runId)).steps.map((s) => s.name)).toEqual(['trigger']);
    // A frame that is not a callback is refused as a bad request, not dropped unanswered.
    expect(await worker.timeout(5_000).emitWithAck('engine-callback', { version: 1 })).toMatchObject({
      type: 'error',
      error: { code: 'INVALID_REQUEST' },
    });

    // A response the app will not send: INVALID_RESPONSE goes back to the worker (and its engine).
    const response = (status: number): EngineReport => ({
      version: 1,
      type: 'flow-response',
      response: { status, headers: {}, body: { result: status } },
      steps: [step('step_1', { sum: 5 })],
    });
    expect(await forward(response(101))).toMatchObject({
      type: 'error',
      error: { code: 'INVALID_RESPONSE', message: expect.stringMatching(/status 101/) },
    });
    // Its steps were kept all the same; the caller still waits.
    expect((await getRun(h.url, job.runId)).steps.map((s) => s.name)).toEqual(['trigger', 'step_1']);
    expect(await forward(response(200))).toEqual({ version: 1, type: 'ok' });
    const answer = await pending;
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ result: 200 });

    const ack = await worker.timeout(5_000).emitWithAck('job-result', jobResult(job));
    expect(ack).toEqual({ version: 1, type: 'ok' });
    expect(await forward(steps)).toMatchObject({ type: 'error', error: { code: 'RUN_ALREADY_FINISHED' } });
  });

  it("answers a sync caller with 500 and the run id when the worker's result says the flow failed", async () => {
    const worker = await connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const pending = postJson(`${h.url}/v1/webhooks/benchmark/sync`, {});
    const job = await pollJob(worker);
    const error = { name: 'Error', code: 'CODE_STEP_FAILED', message: 'boom', step: 'step_2' };
    const ack = await worker
      .timeout(5_000)
      .emitWithAck(
        'job-result',
        jobResult(job, { status: 'FAILED', error, steps: [step('trigger', {})], logKey: null }),
      );
    expect(ack).toEqual({ version: 1, type: 'ok' });
    const answer = await pending;
    expect(answer.status).toBe(500);
    expect(await answer.json()).toEqual({
      error: { code: 'CODE_STEP_FAILED', message: 'boom' },
      runId: job.runId,
      status: 'FAILED',
      step: 'step_2',
    });
  });

  it('retries a run whose worker disconnects, then fails it once its attempts are spent', async () => {
    // RUN_MAX_ATTEMPTS is 2 by default.
    const pending = postJson(`${h.url}/v1/webhooks/benchmark/sync`, {});
    const first = await connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const job = await pollJob(first);
    first.disconnect();

    // Back in the queue, with why its first attempt ended; the caller is still waiting.
    const second = await connectWorker(h.app.tokens.signWorkerToken('w2', 60));
    const retried = await pollJob(second);
    expect(retried.runId).toBe(job.runId);
    expect(await getRun(h.url, job.runId)).toMatchObject({ status: 'RUNNING', attempts: 2 });
    second.disconnect();

    const answer = await pending;
    expect(answer.status).toBe(500);
    expect(await answer.json()).toMatchObject({ runId: job.runId, error: { code: 'WORKER_LOST' } });
    expect(await getRun(h.url, job.runId)).toMatchObject({ status: 'INTERNAL_ERROR', attempts: 2 });
  });

  it("hands the next waiting job back with a result's ack, and again to a poll if that ack was lost", async () => {
    const worker = await connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const first = postJson(`${h.url}/v1/webhooks/benchmark`, {});
    const job = await pollJob(worker);
    await first;
    const second = (await (await postJson(`${h.url}/v1/webhooks/benchmark`, {})).json()) as { runId: string };
    const result = (wantsNext: boolean, done: DispatchedJob) => jobResult(done, undefined, { wantsNext });

    const ack = (await worker.timeout(5_000).emitWithAck('job-result', result(true, job))) as JobResultAck;
    if (ack.type !== 'ok' || ack.job === undefined)
      throw new Error(`expected a job, got ${JSON.stringify(ack)}`);
    expect(ack.job.runId).toBe(second.runId);
    expect((await getRun(h.url, second.runId)).status).toBe('RUNNING');
    // A worker that missed that ack polls; it gets the same job, not a refusal.
    expect((await pollJob(worker)).jobId).toBe(ack.job.jobId);

    // Nothing waits now: the ack carries no job, and a worker that does not ask gets none.
    const last = (await worker
      .timeout(5_000)
      .emitWithAck('job-result', result(true, ack.job))) as JobResultAck;
    expect(last).toEqual({ version: 1, type: 'ok' });
    expect((await getRun(h.url, second.runId)).status).toBe('SUCCEEDED');
  });

  it('refuses a job result for a job the worker does not hold', async () => {
    const worker = await connectWorker(h.app.tokens.signWorkerToken('w1', 60));
    const ack = await worker
      .timeout(5_000)
      .emitWithAck('job-result', jobResult({ jobId: 'nope', runId: 'nope' }));
    expect(ack).toMatchObject({ type: 'error', error: { code: 'INVALID_REQUEST' } });
  });
});
