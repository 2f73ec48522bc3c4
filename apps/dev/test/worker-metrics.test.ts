import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import { type FaultStack, postWebhook, startFaultStack, waitUntil } from './faults/fault-harness.ts';

describe('a worker with METRICS_PORT set (real app, worker and engine processes)', () => {
  let fault: FaultStack;
  let metricsUrl: string;

  beforeAll(async () => {
    fault = await startFaultStack({
      workerEnv: { METRICS_PORT: '0', METRICS_HOST: '127.0.0.1', REUSE_SANDBOX: 'true' },
    });
    await waitUntil(
      () => fault.lines.some(({ line }) => line.json?.msg === 'serving metrics'),
      10_000,
      'the worker to say where its metrics are',
    );
    const announced = fault.lines.find(({ line }) => line.json?.msg === 'serving metrics');
    metricsUrl = String(announced?.line.json?.url);
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('counts jobs, engine boots and cache lookups, shows the engine RSS, and holds no secret', async () => {
    for (let i = 0; i < 2; i += 1)
      expect((await postWebhook(fault.url, 'benchmark')).body).toEqual({ result: 6 });
    // The caller has its answer before the worker reports the job (log upload, finish): wait for that.
    let text = '';
    await waitUntil(
      async () => {
        const response = await fetch(metricsUrl);
        expect(response.status).toBe(200);
        text = await response.text();
        return promSample(text, 'flowbox_worker_jobs_total{status="SUCCEEDED"}') === 2;
      },
      10_000,
      'both jobs counted',
    );
    expect(promSample(text, 'flowbox_worker_engine_boots_total')).toBeGreaterThanOrEqual(1);
    expect(promSample(text, 'flowbox_worker_engine_boot_seconds_count')).toBe(
      promSample(text, 'flowbox_worker_engine_boots_total'),
    );
    expect(promSample(text, 'flowbox_worker_cache_total{artifact="bundle",outcome="miss"}')).toBe(1);
    expect(promSample(text, 'flowbox_worker_cache_total{artifact="bundle",outcome="hit"}')).toBe(1);
    expect(promSample(text, 'flowbox_worker_provision_seconds_count')).toBe(2);
    expect(promSample(text, 'flowbox_worker_engine_rss_bytes')).toBeGreaterThan(10 * 1024 * 1024);
    // The worker's credential and the app's address are configuration, not metrics.
    expect(text).not.toMatch(/eyJ|WORKER_TOKEN|127\.0\.0\.1/);
    // No label a user chooses (a flow id calls its webhook): bounded series.
    expect(text).not.toMatch(/benchmark|flow=/);
    expect((await fetch(metricsUrl.replace('/metrics', '/other'))).status).toBe(404);
  });
});
