// On a real stack (Postgres, Redis, S3, an app and a worker as processes): what a sync caller is
// answered when no step answers it. A failed run answers the flow's own errorResponse (rendered
// over the run's error; the run keeps the full error), or flowbox's error when the flow has none
// or it cannot be sent; a run that succeeds without a response answers 204 with its id.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { RUN_ID_HEADER } from '../../app/src/http/webhook-routes.ts';
import { getRun, manage, postJson, waitForFinalRun } from '../../app/test/app-harness.ts';
import { type RunningStack, startStack } from '../src/stack.ts';

const TRIGGER = { name: 'trigger' as const, piece: 'webhook', trigger: 'catch_webhook', input: {} };

const throwing = (errorResponse?: Record<string, unknown>): Record<string, unknown> => ({
  trigger: TRIGGER,
  steps: [
    {
      type: 'code',
      name: 'charge',
      code: "throw new Error('db password rejected for ' + inputs.who);",
      input: { who: '{{trigger.who}}' },
    },
  ],
  ...(errorResponse === undefined ? {} : { errorResponse }),
});

const SILENT: FlowDefinition = {
  trigger: TRIGGER,
  steps: [
    { type: 'code', name: 'note', code: 'return { noted: inputs.who };', input: { who: '{{trigger.who}}' } },
  ],
};

describe('sync answers without a response step (one app, one worker as processes)', () => {
  let stack: RunningStack;
  let url: string;
  let dataDir: string;
  const create = (id: string, definition: unknown) =>
    manage(url, 'POST', '/v1/flows', { id, name: id, definition, publish: true }, stack.apiKey);

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-sync-answers-'));
    const s3 = inject('s3');
    stack = await startStack({
      dataDir,
      apps: 1,
      workers: 1,
      port: 0,
      logLevel: 'warn',
      databaseUrl: await createTestDatabase(),
      redisUrl: inject('redisUrl'),
      s3: { ...s3, bucket: await createTestBucket() },
      appEnv: { REDIS_PREFIX: testNamespace(), WORKER_POLL_SECONDS: '2', WEBHOOK_TIMEOUT_SECONDS: '60' },
      workerEnv: { RUN_ISOLATION: 'shared' },
      baseEnv: process.env,
    });
    url = stack.appUrls[0] ?? '';
  });

  afterAll(async () => {
    await stack?.close();
    await rm(dataDir, { recursive: true, force: true });
  });

  it("answers a failed run with the flow's errorResponse, keeping the internal error in the run", async () => {
    const created = await create(
      'own-failure',
      throwing({
        status: 502,
        headers: { 'x-failure': '{{error.code}}', 'content-type': 'application/json' },
        body: {
          ok: false,
          reason: '{{error.code}} in {{error.step}}',
          run: '{{run.id}}',
          status: '{{run.status}}',
        },
      }),
    );
    expect(created.status).toBe(201);
    const response = await postJson(`${url}/v1/webhooks/own-failure/sync`, { who: 'alice' });
    expect(response.status).toBe(502);
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    expect(response.headers.get('x-failure')).toBe('CODE_STEP_FAILED');
    const text = await response.text();
    expect(JSON.parse(text)).toEqual({
      ok: false,
      reason: 'CODE_STEP_FAILED in charge',
      run: runId,
      status: 'FAILED',
    });
    expect(text).not.toContain('password');

    const run = await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId);
    expect(run.status).toBe('FAILED');
    expect(run.steps.at(-1)?.error?.message).toContain('db password rejected for alice');
  });

  it("answers flowbox's error when the flow has no errorResponse, or one it may not send", async () => {
    expect((await create('plain-failure', throwing())).status).toBe(201);
    const plain = await postJson(`${url}/v1/webhooks/plain-failure/sync`, { who: 'bob' });
    expect(plain.status).toBe(500);
    expect(await plain.json()).toMatchObject({ error: { code: 'CODE_STEP_FAILED' }, step: 'charge' });

    // set-cookie acts on the app's origin: refused unless WEBHOOK_RESPONSE_ALLOWED_HEADERS names it.
    const cookie = throwing({ status: 400, headers: { 'set-cookie': 'a={{error.code}}' }, body: 'no' });
    expect((await create('cookie-failure', cookie)).status).toBe(201);
    const refused = await postJson(`${url}/v1/webhooks/cookie-failure/sync`, { who: 'carol' });
    expect(refused.status).toBe(500);
    expect(refused.headers.get('set-cookie')).toBeNull();
    expect(await refused.json()).toMatchObject({ error: { code: 'CODE_STEP_FAILED' } });
  });

  it('answers 204 with the run id when a run succeeds without a response step, as publish warned', async () => {
    const created = await create('silent', SILENT);
    expect(created.status).toBe(201);
    expect(((await created.json()) as { warnings: string[] }).warnings).toEqual([
      expect.stringContaining('204 No Content'),
    ]);
    const response = await postJson(`${url}/v1/webhooks/silent/sync`, { who: 'dave' });
    expect(response.status).toBe(204);
    expect(await response.text()).toBe('');
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    const run = await waitForFinalRun(() => getRun(url, runId, stack.apiKey), runId);
    expect(run.status).toBe('SUCCEEDED');
    expect(run.steps.at(-1)).toMatchObject({ name: 'note', output: { noted: 'dave' } });
  });
});
