import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import type { FlowboxApp } from '../src/app.ts';
import { postJson, startTestApp, TEST_API_KEY } from './app-harness.ts';

describe('GET /metrics on the app (real Postgres and Redis, no worker)', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ WEBHOOK_TIMEOUT_SECONDS: '1' }));
  });
  afterAll(async () => {
    await app.close();
  });

  const scrape = async () => {
    const response = await fetch(`${url}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };

  it('counts accepted runs and webhook answers by status, and reads the queue', async () => {
    const before = await scrape();
    expect(promSample(before, 'flowbox_workers_connected')).toBe(0);
    expect(promSample(before, 'flowbox_sync_callers_waiting')).toBe(0);

    expect((await postJson(`${url}/v1/webhooks/benchmark`, {})).status).toBe(202);
    expect((await postJson(`${url}/v1/webhooks/benchmark`, {})).status).toBe(202);
    expect((await postJson(`${url}/v1/webhooks/no-such-flow`, {})).status).toBe(404);

    const after = await scrape();
    expect(promSample(after, 'flowbox_runs_accepted_total')).toBe(2);
    expect(promSample(after, 'flowbox_webhook_responses_total{status="202"}')).toBe(2);
    expect(promSample(after, 'flowbox_webhook_responses_total{status="404"}')).toBe(1);
    // No worker takes them: both wait in the queue this app's Redis holds.
    expect(promSample(after, 'flowbox_queue_jobs{state="waiting"}')).toBeGreaterThanOrEqual(2);
    expect(promSample(after, 'flowbox_queue_jobs{state="active"}')).toBe(0);
    // The process's own figures come with it.
    expect(promSample(after, 'flowbox_app_process_resident_memory_bytes')).toBeGreaterThan(0);
  });

  it('shows a sync caller while it waits, and a timed-out one no more', async () => {
    const waiting = postJson(`${url}/v1/webhooks/benchmark/sync`, {});
    let seen = 0;
    for (let i = 0; i < 50 && seen === 0; i += 1) {
      seen = promSample(await scrape(), 'flowbox_sync_callers_waiting') ?? 0;
      if (seen === 0) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(seen).toBe(1);
    expect((await waiting).status).toBe(504);
    expect(promSample(await scrape(), 'flowbox_sync_callers_waiting')).toBe(0);
  });

  it('holds no secret and no flow id (no label a user chooses)', async () => {
    const text = await scrape();
    expect(text).not.toContain('test-api-key');
    expect(text).not.toContain('test-secret');
    expect(text).not.toContain('benchmark');
    expect(text).not.toContain('no-such-flow');
    expect(text).not.toMatch(/\{[^}]*flow=/);
  });
});

describe('GET /metrics with METRICS_TOKEN set', () => {
  const token = 'metrics-token-0123456789';
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ METRICS_TOKEN: token }));
  });
  afterAll(async () => {
    await app.close();
  });

  it('refuses a scrape without the token, with a wrong one or with the API key: 401', async () => {
    for (const authorization of [
      undefined,
      'Bearer wrong-token-0123456789',
      `Bearer ${TEST_API_KEY}`,
      token,
    ]) {
      const response = await fetch(`${url}/metrics`, {
        headers: authorization === undefined ? {} : { authorization },
      });
      expect(response.status, String(authorization)).toBe(401);
      const body = await response.text();
      expect(JSON.parse(body)).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
      expect(body).not.toContain('flowbox_');
    }
  });

  it('serves it with the token', async () => {
    const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${token}` } });
    expect(response.status).toBe(200);
    expect(promSample(await response.text(), 'flowbox_workers_connected')).toBe(0);
  });
});
