// Fault-injection row "presigned URL misuse": a URL used for another key, an expired
// URL, a run log far over RUN_LOG_MAX_BYTES. Must hold: rejected, and nothing stored. Against
// the real versitygw of the global setup, through the app's own ObjectStorage.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition, RunLog } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../../test/fixtures.ts';
import { ObjectStorage, objectKeys, type PresignedPost } from '../../../app/src/storage/object-storage.ts';
import { getRun, manage, postJson, type RunView } from '../../../app/test/app-harness.ts';
import { createHttpClient } from '../../../engine/src/host/http-client.ts';
import { uploadRunLog } from '../../../engine/src/host/log-uploader.ts';
import { type RunningStack, startStack } from '../../src/stack.ts';

const MiB = 1024 * 1024;
const JSON_TYPE = 'application/json';

function storageFor(bucket: string): ObjectStorage {
  return new ObjectStorage({ ...inject('s3'), bucket });
}

/** 200 when `key` is stored, 404 when it is not: read with the app's credentials. */
async function storedStatus(storage: ObjectStorage, key: string): Promise<number> {
  const response = await fetch(await storage.presignDownload(key, 60));
  await response.arrayBuffer();
  return response.status;
}

function put(url: string, body: string | Uint8Array, contentType = JSON_TYPE): Promise<Response> {
  return fetch(url, { method: 'PUT', headers: { 'content-type': contentType }, body });
}

/** What an uploader does with a presigned POST: the fields first, the content last. */
async function postForm(
  form: PresignedPost,
  body: string | Uint8Array,
  overrides: Record<string, string> = {},
): Promise<{ status: number; text: string }> {
  const data = new FormData();
  for (const [name, value] of Object.entries({ ...form.fields, ...overrides })) data.append(name, value);
  data.append('file', new Blob([body], { type: JSON_TYPE }));
  const response = await fetch(form.url, { method: 'POST', body: data });
  return { status: response.status, text: await response.text() };
}

function runLog(runId: string, padding: number): RunLog {
  const now = new Date().toISOString();
  return {
    version: 1,
    runId,
    flowId: 'f',
    flowVersionId: 'v',
    status: 'SUCCEEDED',
    startedAt: now,
    finishedAt: now,
    steps: [
      {
        name: 'step_1',
        kind: 'code',
        status: 'SUCCEEDED',
        input: {},
        output: 'x'.repeat(padding),
        startedAt: now,
        durationMs: 1,
      },
    ],
  };
}

describe('presigned URL misuse against versitygw', () => {
  let storage: ObjectStorage;

  beforeAll(async () => {
    storage = storageFor(await createTestBucket());
  });
  afterAll(() => {
    storage?.close();
  });

  it('refuses a PUT or GET URL used for another key with 403, and stores nothing there', async () => {
    const [a, b] = [objectKeys.runLog(crypto.randomUUID()), objectKeys.runLog(crypto.randomUUID())];
    const putA = await storage.presignUpload(a, JSON_TYPE, 60);
    const forB = putA.replace(a, b);
    expect(forB).not.toBe(putA);
    expect((await put(forB, '{"forged":true}')).status).toBe(403);
    expect(await storedStatus(storage, b)).toBe(404);

    // The control: the URL works for its own key.
    expect((await put(putA, '{"run":"a"}')).status).toBe(200);
    await storage.put(b, Buffer.from('{"run":"b"}'), JSON_TYPE);
    const getA = await storage.presignDownload(a, 60);
    const readB = await fetch(getA.replace(a, b));
    expect(readB.status).toBe(403);
    expect(await readB.text()).not.toContain('"run":"b"');
    expect(await (await fetch(getA)).text()).toBe('{"run":"a"}');
  });

  it('refuses a log-upload URL used to read, to delete, or with another content type', async () => {
    const key = objectKeys.runLog(crypto.randomUUID());
    const url = await storage.presignUpload(key, JSON_TYPE, 60);
    expect((await put(url, '{"v":1}')).status).toBe(200);
    expect((await fetch(url, { method: 'GET' })).status).toBe(403);
    expect((await fetch(url, { method: 'DELETE' })).status).toBe(403);
    // The content type is signed: a log cannot be turned into a page the S3 host would serve.
    expect((await put(url, '<script>alert(1)</script>', 'text/html')).status).toBe(403);
    const stored = await fetch(await storage.presignDownload(key, 60));
    expect(stored.headers.get('content-type')).toBe(JSON_TYPE);
    expect(await stored.text()).toBe('{"v":1}');
  });

  it('refuses a PUT URL once it has expired', async () => {
    const key = objectKeys.runLog(crypto.randomUUID());
    const url = await storage.presignUpload(key, JSON_TYPE, 1);
    // SigV4 dates have whole seconds: two seconds after signing, a 1 s URL has expired for sure.
    await new Promise((resolve) => setTimeout(resolve, 2_200));
    const response = await put(url, '{"late":true}');
    expect(response.status).toBe(403);
    expect(await response.text()).toMatch(/expired/i);
    expect(await storedStatus(storage, key)).toBe(404);
  });

  it("the engine's uploader refuses a run log over its limit, and so does S3 when an engine ignores it", async () => {
    const runId = crypto.randomUUID();
    const key = objectKeys.runLog(runId);
    // What the dispatcher hands the engine: a POST form whose policy caps the size.
    const target = {
      ...(await storage.presignUploadForm(key, JSON_TYPE, 64 * 1024, 60)),
      key,
      maxBytes: 64 * 1024,
    };
    const http = createHttpClient();
    try {
      const refused = uploadRunLog(http, target, runLog(runId, 3 * MiB), 10_000);
      await expect(refused).rejects.toMatchObject({
        code: 'LOG_UPLOAD_FAILED',
        message: /over the 65536 limit/,
      });
      expect(await storedStatus(storage, key)).toBe(404);
      // A hostile engine skips its own check: the S3 server refuses the upload all the same.
      const bypass = uploadRunLog(http, { ...target, maxBytes: 100 * MiB }, runLog(runId, 3 * MiB), 10_000);
      await expect(bypass).rejects.toMatchObject({ code: 'LOG_UPLOAD_FAILED', message: /answered 400/ });
      expect(await storedStatus(storage, key)).toBe(404);
      await uploadRunLog(http, target, runLog(runId, 10), 10_000);
      expect(await storedStatus(storage, key)).toBe(200);
    } finally {
      http.close();
    }
  });

  it('a presigned PUT bounds no size: the S3 server stores 3 MiB through a URL meant for a small log', async () => {
    // Why presignUploadForm exists: with a PUT, the limit rests on the uploader alone.
    const key = objectKeys.runLog(crypto.randomUUID());
    const url = await storage.presignUpload(key, JSON_TYPE, 60);
    expect((await put(url, new Uint8Array(3 * MiB))).status).toBe(200);
    expect(await storedStatus(storage, key)).toBe(200);
  });

  it('a presigned POST form: the S3 server refuses an upload over the limit with 400 and stores nothing', async () => {
    const key = objectKeys.runLog(crypto.randomUUID());
    const form = await storage.presignUploadForm(key, JSON_TYPE, 64 * 1024, 60);

    const far = await postForm(form, new Uint8Array(3 * MiB));
    expect(far.status).toBe(400);
    expect(far.text).toContain('EntityTooLarge');
    expect(await storedStatus(storage, key)).toBe(404);
    const justOver = await postForm(form, new Uint8Array(64 * 1024 + 1));
    expect(justOver.status).toBe(400);
    expect(await storedStatus(storage, key)).toBe(404);

    // The control: exactly the limit is stored, with the signed content type.
    const atLimit = await postForm(form, new Uint8Array(64 * 1024).fill(0x20));
    expect(atLimit.status).toBe(204);
    const stored = await fetch(await storage.presignDownload(key, 60));
    expect(stored.headers.get('content-type')).toBe(JSON_TYPE);
    expect((await stored.arrayBuffer()).byteLength).toBe(64 * 1024);
  });

  it('a presigned POST form refuses another key, a raised limit, another content type and an expired policy', async () => {
    const key = objectKeys.runLog(crypto.randomUUID());
    const other = objectKeys.runLog(crypto.randomUUID());
    const form = await storage.presignUploadForm(key, JSON_TYPE, 1024, 60);

    const otherKey = await postForm(form, '{}', { key: other });
    expect(otherKey.status).toBe(403);
    expect(await storedStatus(storage, other)).toBe(404);

    // The uploader raises the limit in the policy and keeps the signature.
    const policy = JSON.parse(Buffer.from(form.fields.Policy ?? '', 'base64').toString('utf8')) as {
      conditions: unknown[];
    };
    const raised = {
      ...policy,
      conditions: policy.conditions.map((c) =>
        Array.isArray(c) && c[0] === 'content-length-range' ? ['content-length-range', 0, 100 * MiB] : c,
      ),
    };
    const edited = await postForm(form, new Uint8Array(4096), {
      Policy: Buffer.from(JSON.stringify(raised)).toString('base64'),
    });
    expect(edited.status).toBe(403);
    expect(edited.text).toContain('SignatureDoesNotMatch');

    expect((await postForm(form, '<p>', { 'Content-Type': 'text/html' })).status).toBe(403);
    expect(await storedStatus(storage, key)).toBe(404);

    const expired = await storage.presignUploadForm(key, JSON_TYPE, 1024, -1);
    const late = await postForm(expired, '{}');
    expect(late.status).toBe(403);
    expect(late.text).toMatch(/expired/i);
    expect(await storedStatus(storage, key)).toBe(404);
  });
});

describe('a run whose steps would take far more than RUN_LOG_MAX_BYTES, through real app, worker and engine processes', () => {
  let stack: RunningStack;
  let url: string;
  let dataDir: string;
  let storage: ObjectStorage;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-fault-log-'));
    const bucket = await createTestBucket();
    storage = storageFor(bucket);
    stack = await startStack({
      dataDir,
      apps: 1,
      workers: 1,
      port: 0,
      logLevel: 'warn',
      databaseUrl: await createTestDatabase(),
      redisUrl: inject('redisUrl'),
      s3: { ...inject('s3'), bucket },
      appEnv: { REDIS_PREFIX: testNamespace(), WORKER_POLL_SECONDS: '2', RUN_LOG_MAX_BYTES: '16384' },
      baseEnv: process.env,
    });
    url = stack.appUrls[0] ?? '';
    // Each step's output goes into the log: 300 kB of it, 18 times the limit.
    const definition: FlowDefinition = {
      trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
      steps: [{ type: 'code', name: 'step_1', code: "return 'x'.repeat(300_000);", input: {} }],
    };
    const created = await manage(
      url,
      'POST',
      '/v1/flows',
      { id: 'big-log', name: 'big-log', definition, publish: true },
      stack.apiKey,
    );
    expect(created.status).toBe(201);
  });
  afterAll(async () => {
    await stack?.close();
    storage?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('leaves out of the log the output that would overfill it, keeps the run SUCCEEDED, and stores a log within the limit', async () => {
    const accepted = await postJson(`${url}/v1/webhooks/big-log`, {});
    expect(accepted.status).toBe(202);
    const { runId } = (await accepted.json()) as { runId: string };
    const deadline = Date.now() + 20_000;
    let run: RunView = await getRun(url, runId, stack.apiKey);
    while (!['SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR'].includes(run.status)) {
      if (Date.now() > deadline) throw new Error(`run ${runId} still ${run.status}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
      run = await getRun(url, runId, stack.apiKey);
    }
    // The engine keeps the run's steps within RUN_LOG_MAX_BYTES: the output is left out, not the run.
    expect(run).toMatchObject({ status: 'SUCCEEDED' });
    expect(run.steps.find((step) => step.name === 'step_1')?.output).toEqual({
      dropped: expect.stringMatching(/^300002 bytes/),
    });
    expect(run.logKey).toBe(objectKeys.runLog(runId));
    const stored = await fetch(String(run.logUrl));
    expect(stored.status).toBe(200);
    expect((await stored.arrayBuffer()).byteLength).toBeLessThanOrEqual(16_384);
  });
});
