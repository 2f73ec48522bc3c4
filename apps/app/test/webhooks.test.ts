import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { RUN_ID_HEADER } from '../src/http/webhook-routes.ts';
import { getRun, manage, postJson, startTestApp } from './app-harness.ts';

describe('webhook intake (no worker attached)', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ WEBHOOK_TIMEOUT_SECONDS: '1' }));
  });
  afterAll(async () => {
    await app.close();
  });

  it('answers 404 for an unknown flow, creating no run', async () => {
    const response = await postJson(`${url}/v1/webhooks/no-such-flow/sync`, {});
    expect(response.status).toBe(404);
    expect(response.headers.get(RUN_ID_HEADER)).toBeNull();
    expect(await response.json()).toMatchObject({ error: { code: 'FLOW_NOT_FOUND' } });
  });

  it('answers 400 for a body that is not JSON', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, '{"unterminated": ');
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'INVALID_BODY' } });
  });

  it('answers 400 for JSON that is not an object', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, [1, 2, 3]);
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      error: { code: 'INVALID_BODY', message: 'the webhook body must be a JSON object' },
    });
  });

  it('answers 413 for a body over the limit', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, { blob: 'x'.repeat(1_100_000) });
    expect(response.status).toBe(413);
    expect(await response.json()).toMatchObject({ error: { code: 'BODY_TOO_LARGE' } });
  });

  it('answers 415 for a content type it does not take', async () => {
    const response = await fetch(`${url}/v1/webhooks/benchmark/sync`, {
      method: 'POST',
      headers: { 'content-type': 'text/plain' },
      body: 'hello',
    });
    expect(response.status).toBe(415);
    expect(await response.json()).toMatchObject({ error: { code: 'UNSUPPORTED_MEDIA_TYPE' } });
  });

  it('accepts an async webhook with 202 and a readable QUEUED run', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark`, { hello: 'world' });
    expect(response.status).toBe(202);
    const { runId } = (await response.json()) as { runId: string };
    expect(response.headers.get(RUN_ID_HEADER)).toBe(runId);
    const run = await getRun(url, runId);
    expect(run).toMatchObject({ id: runId, status: 'QUEUED', flowId: 'benchmark', sync: false, steps: [] });

    const since = new Date(Date.now() - 60_000).toISOString();
    const listed = await manage(
      url,
      'GET',
      `/v1/runs?flowId=benchmark&since=${encodeURIComponent(since)}&limit=50`,
    );
    expect(listed.status).toBe(200);
    const { runs } = (await listed.json()) as { runs: Array<{ id: string; status: string }> };
    expect(runs.map((r) => r.id)).toContain(runId);
    expect((await manage(url, 'GET', '/v1/runs?status=DONE&limit=5')).status).toBe(400);
  });

  it('answers 504 with the run id when no worker answers within the webhook timeout; the unstarted run ends CALLER_GONE', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, {});
    expect(response.status).toBe(504);
    const body = (await response.json()) as { runId: string; error: { code: string; message: string } };
    expect(body.error.code).toBe('WEBHOOK_TIMEOUT');
    expect(body.error.message).toMatch(/will not run \(CALLER_GONE\)/);
    expect(response.headers.get(RUN_ID_HEADER)).toBe(body.runId);
    expect(await getRun(url, body.runId)).toMatchObject({
      status: 'FAILED',
      error: { code: 'CALLER_GONE' },
      attempts: 0,
    });
  });

  it('answers 404 for a run that does not exist or a malformed id', async () => {
    expect((await manage(url, 'GET', '/v1/runs/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await manage(url, 'GET', '/v1/runs/not-a-uuid')).status).toBe(404);
  });

  it('keeps the management API behind the API key', async () => {
    const runId = '00000000-0000-4000-8000-000000000000';
    const none = await fetch(`${url}/v1/runs/${runId}`);
    expect(none.status).toBe(401);
    expect(await none.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    expect((await manage(url, 'GET', `/v1/runs/${runId}`, undefined, 'wrong-key-0123456789')).status).toBe(
      401,
    );
    expect((await manage(url, 'GET', '/v1/flows', undefined, 'wrong-key-0123456789')).status).toBe(401);
    const viaHeader = await fetch(`${url}/v1/flows`, { headers: { 'x-api-key': 'test-api-key-0123456789' } });
    expect(viaHeader.status).toBe(200);
  });

  it('reports ready when Postgres and Redis answer', async () => {
    const response = await fetch(`${url}/health/ready`);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ status: 'ok', database: 'ok', redis: 'ok', workers: 0 });
  });
});
