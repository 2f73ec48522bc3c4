import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BENCHMARK_LOOP_FLOW_ID, BENCHMARK_ROUTER_FLOW_ID } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { RUN_ID_HEADER } from '../../app/src/http/webhook-routes.ts';
import { getRun, postJson, waitForFinalRun } from '../../app/test/app-harness.ts';
import { type RunningStack, startStack } from '../src/stack.ts';

// The benchmark's loop and router flows, seeded by the app, through real app, worker and engine
// processes: the run a user reads (GET /v1/runs/:id) carries every step with its path.
describe('the seeded loop and router flows, end to end (RUN_ISOLATION=isolate)', () => {
  let stack: RunningStack;
  let url: string;
  let dataDir: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-seeded-flows-'));
    stack = await startStack({
      dataDir,
      apps: 1,
      workers: 1,
      port: 0,
      logLevel: 'warn',
      databaseUrl: await createTestDatabase(),
      redisUrl: inject('redisUrl'),
      s3: { ...inject('s3'), bucket: await createTestBucket() },
      appEnv: { REDIS_PREFIX: testNamespace(), WORKER_POLL_SECONDS: '2' },
      baseEnv: process.env,
    });
    url = stack.appUrls[0] ?? '';
  });
  afterAll(async () => {
    await stack?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('the loop flow answers its last iteration and records 200 iteration steps by path', async () => {
    const answer = await postJson(`${url}/v1/webhooks/${BENCHMARK_LOOP_FLOW_ID}/sync`, {});
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ plus_one: { result: 100 }, add: { result: 199 } });
    const runId = answer.headers.get(RUN_ID_HEADER) ?? '';
    const run = await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId);
    expect(run.status).toBe('SUCCEEDED');
    const paths = run.steps.map((step) => step.path);
    expect(paths.filter((path) => path?.startsWith('each['))).toHaveLength(200);
    expect(paths).toContain('each[99]/add');
    expect(run.steps.find((step) => step.path === 'each')?.output).toMatchObject({
      iterations: expect.arrayContaining([{ plus_one: { result: 1 }, add: { result: 1 } }]),
    });
  });

  it('the router flow answers {"result":6} and records the branches not taken as SKIPPED', async () => {
    const answer = await postJson(`${url}/v1/webhooks/${BENCHMARK_ROUTER_FLOW_ID}/sync`, {});
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ result: 6 });
    const runId = answer.headers.get(RUN_ID_HEADER) ?? '';
    const run = await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId);
    expect(run.steps.map((step) => `${step.path} ${step.status}`)).toEqual([
      'trigger SUCCEEDED',
      'route/get SKIPPED',
      'route/put SKIPPED',
      'route/delete SKIPPED',
      'route SUCCEEDED',
      'step_1 SUCCEEDED',
      'step_2 SUCCEEDED',
      'step_3 SUCCEEDED',
    ]);
    expect(run.steps.find((step) => step.path === 'route/get')?.skipReason).toMatch(/did not hold/);
  });
});
