import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { createPool } from '../src/db/pool.ts';
import type { AppConfig } from '../src/env.ts';
import { RUN_ID_HEADER } from '../src/http/webhook-routes.ts';
import { getRun, manage, postJson, startTestApp } from './app-harness.ts';

describe('webhook intake (no worker attached)', () => {
  let app: FlowboxApp;
  let url: string;
  let config: AppConfig;

  beforeAll(async () => {
    ({ app, url, config } = await startTestApp({ WEBHOOK_TIMEOUT_SECONDS: '1' }));
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

  it('takes a form, text, bytes (typed or not) and a GET, and keeps the whole request in the run row', async () => {
    const bytes = Buffer.from([0, 1, 254, 255]);
    const sent: Array<[string, RequestInit, unknown]> = [
      [
        '?src=slack&tag=a&tag=b',
        {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', 'X-Sig': 's1' },
          body: 'a=1&a=2&b=x+y',
        },
        {
          method: 'POST',
          query: { src: 'slack', tag: ['a', 'b'] },
          body: { a: ['1', '2'], b: 'x y' },
          rawBody: 'a=1&a=2&b=x+y',
          rawBodyEncoding: 'utf8',
        },
      ],
      [
        '',
        {
          method: 'POST',
          headers: { 'content-type': 'text/plain; charset=utf-8', 'X-Sig': 's1' },
          body: 'hello',
        },
        { method: 'POST', query: {}, body: 'hello', rawBody: 'hello', rawBodyEncoding: 'utf8' },
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
          query: {},
          body: null,
          rawBody: bytes.toString('base64'),
          rawBodyEncoding: 'base64',
        },
      ],
      [
        '',
        { method: 'POST', headers: { 'X-Sig': 's1' }, body: bytes },
        {
          method: 'POST',
          query: {},
          body: null,
          rawBody: bytes.toString('base64'),
          rawBodyEncoding: 'base64',
        },
      ],
      [
        '?a=1&a=2&b=3',
        { method: 'GET', headers: { 'X-Sig': 's1' } },
        { method: 'GET', query: { a: ['1', '2'], b: '3' }, body: {}, rawBody: '', rawBodyEncoding: 'utf8' },
      ],
      [
        '',
        {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'X-Sig': 's1' },
          body: '{ "x" : 1 }',
        },
        { method: 'POST', query: {}, body: { x: 1 }, rawBody: '{ "x" : 1 }', rawBodyEncoding: 'utf8' },
      ],
    ];
    const pool = createPool(config.DATABASE_URL, 1);
    try {
      for (const [query, init, expected] of sent) {
        const response = await fetch(`${url}/v1/webhooks/benchmark${query}`, init);
        expect(response.status, `${init.method} ${String(init.headers)}`).toBe(202);
        const { runId } = (await response.json()) as { runId: string };
        const { rows } = await pool.query('SELECT trigger FROM runs WHERE id = $1', [runId]);
        expect(rows[0]?.trigger).toMatchObject({
          ...(expected as object),
          headers: expect.objectContaining({ 'x-sig': 's1' }),
        });
      }
    } finally {
      await pool.end();
    }
  });

  it('answers 400 for a form with a __proto__ field', async () => {
    const response = await fetch(`${url}/v1/webhooks/benchmark`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: '__proto__=x',
    });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ error: { code: 'INVALID_BODY' } });
  });

  it('does not run a flow for a HEAD', async () => {
    const response = await fetch(`${url}/v1/webhooks/benchmark`, { method: 'HEAD' });
    expect(response.status).toBe(404);
    expect(response.headers.get(RUN_ID_HEADER)).toBeNull();
  });

  it('refuses a huge header set or URL with 431, and an overlong flow id with 414, and stays up', async () => {
    const headers = Object.fromEntries(Array.from({ length: 40 }, (_, i) => [`x-h${i}`, 'v'.repeat(1_000)]));
    expect((await fetch(`${url}/v1/webhooks/benchmark`, { method: 'POST', headers })).status).toBe(431);
    expect((await fetch(`${url}/v1/webhooks/benchmark?q=${'a'.repeat(40_000)}`)).status).toBe(431);
    expect((await fetch(`${url}/v1/webhooks/${'f'.repeat(200)}`, { method: 'POST' })).status).toBe(414);
    expect((await fetch(`${url}/v1/webhooks/benchmark`, { method: 'POST' })).status).toBe(202);
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
