import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition, RunLog } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { ANSWERS_THEN_WORKS } from '../../../test/flows.ts';
import { RUN_ID_HEADER } from '../../app/src/http/webhook-routes.ts';
import {
  fetchRunLog,
  getRun,
  manage,
  postJson,
  type RunView,
  waitForFinalRun,
} from '../../app/test/app-harness.ts';
import { type RunningStack, startStack } from '../src/stack.ts';

/** Waits for a run to reach a final state, reading it the way a user would. */
function codeFlow(code: string): FlowDefinition {
  return {
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
    steps: [
      { type: 'code', name: 'step_1', code, input: { who: '{{trigger.who}}' } },
      {
        type: 'piece',
        name: 'step_2',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: '{{step_1}}' },
      },
    ],
  };
}

/** Answers with the request as its parts reach a step through templates. */
const REQUEST_FLOW: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'code',
      name: 'step_1',
      code: 'return inputs;',
      input: {
        method: '{{trigger.method}}',
        sig: '{{trigger.headers.x-sig}}',
        type: 'type={{trigger.headers.content-type}}',
        query: '{{trigger.query}}',
        body: '{{trigger.body}}',
        rawBody: '{{trigger.rawBody}}',
        encoding: '{{trigger.rawBodyEncoding}}',
      },
    },
    {
      type: 'piece',
      name: 'step_2',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{step_1}}' },
    },
  ],
};

async function startTestStack(
  options: {
    apps: number;
    workers: number;
    workerTargets?: number[];
    appEnv?: Record<string, string>;
    workerEnv?: Record<string, string>;
  },
  dataDir: string,
) {
  const s3 = inject('s3');
  const stack = await startStack({
    dataDir,
    apps: options.apps,
    workers: options.workers,
    workerTargets: options.workerTargets,
    port: 0,
    logLevel: 'warn',
    databaseUrl: await createTestDatabase(),
    redisUrl: inject('redisUrl'),
    s3: { ...s3, bucket: await createTestBucket() },
    appEnv: { REDIS_PREFIX: testNamespace(), WORKER_POLL_SECONDS: '2', ...options.appEnv },
    workerEnv: options.workerEnv,
    baseEnv: process.env,
  });
  return { stack };
}

// The main path in each isolation level: `isolate` (the default, RUN_ISOLATION unset) runs every
// run of the one worker in a fresh context of its reused engine (in an isolate that serves
// ISOLATE_MAX_RUNS runs); `shared` in the engine's realm.
describe.each<{ name: string; env: Record<string, string> }>([
  { name: 'shared', env: { RUN_ISOLATION: 'shared' } },
  { name: 'isolate', env: {} },
])('end to end: one app and one worker as real processes (RUN_ISOLATION=$name)', (isolation) => {
  let stack: RunningStack;
  let url: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-e2e-'));
    const started = await startTestStack(
      {
        apps: 1,
        workers: 1,
        appEnv: { WEBHOOK_TIMEOUT_SECONDS: '2', CODE_STEP_TIMEOUT_MS: '4000' },
        workerEnv: isolation.env,
      },
      dataDir,
    );
    stack = started.stack;
    url = stack.appUrls[0] ?? '';
    const flowsToAdd: Record<string, string> = {
      throws: "throw new Error('boom: ' + inputs.who);",
      echo: 'return { who: inputs.who };',
      loops: 'while (true) {}',
      // Busy for longer than the webhook timeout but well inside the code-step timeout.
      slow: 'const end = Date.now() + 3000; while (Date.now() < end) {} return { done: true };',
    };
    for (const [id, code] of Object.entries(flowsToAdd)) {
      const created = await manage(
        url,
        'POST',
        '/v1/flows',
        { id, name: id, definition: codeFlow(code), publish: true },
        stack.apiKey,
      );
      expect(created.status).toBe(201);
    }
    const request = await manage(
      url,
      'POST',
      '/v1/flows',
      { id: 'request', name: 'request', definition: REQUEST_FLOW, publish: true },
      stack.apiKey,
    );
    expect(request.status).toBe(201);
    // The stack's worker cache starts empty (DATA_DIR/worker-cache): one run first installs the
    // engine and builds its snapshot, so that the 2 s webhook timeout below times flows alone.
    const warmUp = await postJson(`${url}/v1/webhooks/benchmark`, {});
    const { runId } = (await warmUp.json()) as { runId: string };
    await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId, 45_000);
  });

  afterAll(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('answers the benchmark flow with {"result":6} and records the run, its steps and its log', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, {});
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: 6 });
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    expect(runId).toMatch(/^[0-9a-f-]{36}$/);

    const run = await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.steps.map((s) => [s.name, s.status, s.output])).toEqual([
      ['trigger', 'SUCCEEDED', expect.objectContaining({ method: 'POST', body: {}, rawBody: '{}' })],
      ['step_1', 'SUCCEEDED', { result: 5 }],
      ['step_2', 'SUCCEEDED', { result: 6 }],
      ['step_3', 'SUCCEEDED', expect.objectContaining({ body: { result: 6 } })],
    ]);
    expect(run.logKey).toBe(`runs/${runId}/log.json`);

    // The latency anatomy is on the run, and its parts fit inside the worker's busy time and the total.
    const t = run.timings ?? {};
    for (const part of [
      'queueMs',
      'provisionMs',
      'bootMs',
      'runMs',
      'logPersistMs',
      'workerBusyMs',
      'totalMs',
    ]) {
      expect(t[part], part).toBeGreaterThanOrEqual(0);
    }
    const worked = (t.provisionMs ?? 0) + (t.bootMs ?? 0) + (t.runMs ?? 0) + (t.logPersistMs ?? 0);
    expect(worked).toBeLessThanOrEqual(t.workerBusyMs ?? 0);
    // Clocks of two processes: allow a millisecond of rounding between them.
    expect((t.queueMs ?? 0) + (t.workerBusyMs ?? 0)).toBeLessThanOrEqual((t.totalMs ?? 0) + 1);
    expect(run.provisioning).toMatchObject({ bundle: expect.stringMatching(/^(hit|miss)$/) });

    const log = (await (await fetchRunLog(run.logUrl)).json()) as RunLog;
    expect(log).toMatchObject({ runId, status: 'SUCCEEDED', flowId: 'benchmark' });
    expect(log.steps.map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);
    for (const step of log.steps) {
      expect(step).toHaveProperty('input');
      expect(step.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it('runs an async webhook to completion', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark`, { any: 'thing' });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    expect((await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId)).status).toBe('SUCCEEDED');
  });

  it('hands a form, text, bytes and a GET to the flow with method, headers, query and rawBody', async () => {
    const bytes = Buffer.from([0, 1, 254, 255]);
    const cases: Array<[string, RequestInit, Record<string, unknown>]> = [
      [
        '?src=slack&tag=a&tag=b',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Sig': 's1' },
          body: 'a=1&a=2&b=x+y',
        },
        {
          method: 'POST',
          type: 'type=application/x-www-form-urlencoded',
          query: { src: 'slack', tag: ['a', 'b'] },
          body: { a: ['1', '2'], b: 'x y' },
          rawBody: 'a=1&a=2&b=x+y',
          encoding: 'utf8',
        },
      ],
      [
        '',
        { method: 'POST', headers: { 'content-type': 'text/plain', 'X-Sig': 's1' }, body: 'hello' },
        {
          method: 'POST',
          type: 'type=text/plain',
          query: {},
          body: 'hello',
          rawBody: 'hello',
          encoding: 'utf8',
        },
      ],
      [
        '',
        {
          method: 'POST',
          headers: { 'content-type': 'application/octet-stream', 'X-Sig': 's1' },
          body: bytes,
        },
        {
          method: 'POST',
          type: 'type=application/octet-stream',
          query: {},
          body: null,
          rawBody: bytes.toString('base64'),
          encoding: 'base64',
        },
      ],
      [
        '?a=1&a=2&b=3',
        { method: 'GET', headers: { 'X-Sig': 's1', 'content-type': 'none' } },
        {
          method: 'GET',
          type: 'type=none',
          query: { a: ['1', '2'], b: '3' },
          body: {},
          rawBody: '',
          encoding: 'utf8',
        },
      ],
    ];
    for (const [query, init, expected] of cases) {
      const response = await fetch(`${url}/v1/webhooks/request/sync${query}`, init);
      expect(response.status, String(init.method)).toBe(200);
      expect(await response.json()).toEqual({ ...expected, sig: 's1' });
    }
  });

  it('still reads {{trigger.x}} as the body field x', async () => {
    const response = await postJson(`${url}/v1/webhooks/echo/sync`, { who: 'ada' });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ who: 'ada' });
  });

  it('records a run whose body and step output hold U+0000, which Postgres text cannot', async () => {
    const response = await postJson(`${url}/v1/webhooks/echo/sync`, { who: 'a\u0000b' });
    expect(response.status).toBe(200);
    // The caller gets its own bytes back; only the stored record replaces the NUL.
    expect(await response.json()).toEqual({ who: 'a\u0000b' });
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    const run = await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.steps.find((s) => s.name === 'step_1')?.output).toEqual({ who: 'a\uFFFDb' });
  });

  it('answers 500 naming the run when a code step throws, and records the failure', async () => {
    const response = await postJson(`${url}/v1/webhooks/throws/sync`, { who: 'alice' });
    // 500 rather than the webhook timeout's 504: the failure was reported at once.
    expect(response.status).toBe(500);
    const body = (await response.json()) as {
      runId: string;
      step: string;
      error: { code: string; message: string };
    };
    expect(body).toMatchObject({ step: 'step_1', error: { code: 'CODE_STEP_FAILED' } });
    expect(body.error.message).toContain('boom: alice');
    expect(response.headers.get(RUN_ID_HEADER)).toBe(body.runId);

    const run = await waitForFinalRun(() => getRun(url, body.runId, stack.apiKey), body.runId);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({ code: 'CODE_STEP_FAILED', step: 'step_1' });
    expect(run.steps.at(-1)).toMatchObject({ name: 'step_1', status: 'FAILED' });
    const log = (await (await fetchRunLog(run.logUrl)).json()) as RunLog;
    expect(log.status).toBe('FAILED');
    expect(log.steps.at(-1)?.error?.message).toContain('boom: alice');
  });

  it('kills a code step that never ends and fails its run', async () => {
    const response = await postJson(`${url}/v1/webhooks/loops/sync`, { who: 'bob' });
    const body = (await response.json()) as { runId: string; error: { code: string } };
    // The 2 s webhook timeout may answer first; either way the run id is there and the run fails.
    expect([500, 504]).toContain(response.status);
    const run = await waitForFinalRun(() => getRun(url, body.runId, stack.apiKey), body.runId);
    expect(run.status).toBe('FAILED');
    expect(run.error?.code).toBe('CODE_STEP_TIMEOUT');
  });

  it('answers 504 with the run id when the flow is slower than the webhook timeout, and still finishes the run', async () => {
    const response = await postJson(`${url}/v1/webhooks/slow/sync`, { who: 'carol' });
    expect(response.status).toBe(504);
    const body = (await response.json()) as { runId: string; error: { code: string } };
    expect(body.error.code).toBe('WEBHOOK_TIMEOUT');
    expect(response.headers.get(RUN_ID_HEADER)).toBe(body.runId);
    const run = await waitForFinalRun(() => getRun(url, body.runId, stack.apiKey), body.runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.steps.find((s) => s.name === 'step_1')?.output).toEqual({ done: true });
  });

  it('still serves the benchmark flow after the failures above', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, {});
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: 6 });
  });
});

/** Answers the caller, then runs on (a code step that ends only at its timeout). */

describe('end to end: two apps, the webhook on one and the worker on the other', () => {
  let stack: RunningStack;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-e2e-'));
    ({ stack } = await startTestStack(
      {
        apps: 2,
        workers: 1,
        workerTargets: [1],
        // One attempt: the killed worker's run ends at once instead of waiting for another worker.
        appEnv: { RUN_MAX_ATTEMPTS: '1', CODE_STEP_TIMEOUT_MS: '3000' },
      },
      dataDir,
    ));
    const created = await manage(
      stack.appUrls[0] ?? '',
      'POST',
      '/v1/flows',
      {
        id: 'answers-then-works',
        name: 'answers, then works on',
        definition: ANSWERS_THEN_WORKS,
        publish: true,
      },
      stack.apiKey,
    );
    expect(created.status).toBe(201);
  });

  afterAll(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('routes the response through Redis to the app holding the connection', async () => {
    const [entry, workerApp] = stack.appUrls as [string, string];
    const response = await postJson(`${entry}/v1/webhooks/benchmark/sync`, {});
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ result: 6 });

    // The engine's callbacks travel over its worker's socket to the app that worker is connected
    // to, so all of them landed on the second app while the first held the caller's connection.
    const health = async (base: string) =>
      (await (await fetch(`${base}/health/ready`)).json()) as { workers: number };
    expect((await health(entry)).workers).toBe(0);
    expect((await health(workerApp)).workers).toBe(1);
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    const run = await waitForFinalRun(() => getRun(entry, runId, stack.apiKey), runId);
    expect(run.status).toBe('SUCCEEDED');
  });

  it('shows the steps and the response on either app as soon as the caller has its answer', async () => {
    const [entry, workerApp] = stack.appUrls as [string, string];
    const response = await postJson(`${entry}/v1/webhooks/answers-then-works/sync`, {});
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ n: 1 });
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';

    // The engine reported to the second app; the caller waited on the first. Its last step is
    // still running, so what both show comes from the engine's reports, not from the record.
    for (const base of [entry, workerApp]) {
      const run = (await getRun(base, runId, stack.apiKey)) as RunView & { response?: unknown };
      expect(run.status, base).toBe('RUNNING');
      expect(
        run.steps.map((s) => [s.name, s.status]),
        base,
      ).toEqual([
        ['trigger', 'SUCCEEDED'],
        ['step_1', 'SUCCEEDED'],
      ]);
      expect(run.response, base).toEqual({ status: 200, headers: {}, body: { n: 1 } });
    }
    const run = await waitForFinalRun(() => getRun(entry, runId, stack.apiKey), runId);
    expect(run).toMatchObject({ status: 'FAILED', error: { code: 'CODE_STEP_TIMEOUT', step: 'step_3' } });
    expect(run.steps.map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);
  });

  it("keeps a lost worker's reported steps, read from the app that did not hear them", async () => {
    const [entry] = stack.appUrls as [string, string];
    const response = await postJson(`${entry}/v1/webhooks/answers-then-works/sync`, {});
    expect(response.status).toBe(200);
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';

    process.kill(stack.workers[0]?.pid ?? -1, 'SIGKILL');
    const run = await waitForFinalRun(() => getRun(entry, runId, stack.apiKey), runId);
    expect(run).toMatchObject({ status: 'INTERNAL_ERROR', error: { code: 'WORKER_LOST' } });
    // The steps before the response came with it; the response step's own record follows in a
    // progress report once the 250 ms interval has passed, which a slow (busy) machine reaches
    // before the kill. The step that was still running when the worker died is never reported.
    expect(run.steps.every((s) => s.status === 'SUCCEEDED')).toBe(true);
    expect([
      ['trigger', 'step_1'],
      ['trigger', 'step_1', 'step_2'],
    ]).toContainEqual(run.steps.map((s) => s.name));
  });
});
