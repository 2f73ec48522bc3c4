import { startRedisServer } from '@flowbox/local-services';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { RUN_ID_HEADER } from '../src/http/webhook-routes.ts';
import { getRun, manage, postJson, startTestApp } from './app-harness.ts';

/** With its own redis-server, so stopping it touches no other test. */
describe('webhooks while Redis is down', () => {
  let app: FlowboxApp;
  let url: string;
  let redis: Awaited<ReturnType<typeof startRedisServer>>;

  beforeAll(async () => {
    redis = await startRedisServer();
    ({ app, url } = await startTestApp({ REDIS_URL: redis.url }));
  });
  afterAll(async () => {
    await app.close();
    await redis.close();
  });

  it('answers 503 at once, never hangs, and records the accepted run as INTERNAL_ERROR', async () => {
    await redis.close();
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, {});
    expect(response.status).toBe(503);
    expect(await response.json()).toMatchObject({ error: { code: 'QUEUE_UNAVAILABLE' } });
    const runId = response.headers.get(RUN_ID_HEADER) ?? '';
    const run = await getRun(url, runId);
    expect(run).toMatchObject({ status: 'INTERNAL_ERROR', error: { code: 'QUEUE_UNAVAILABLE' } });

    const health = await fetch(`${url}/health/ready`);
    expect(health.status).toBe(503);
    expect(await health.json()).toMatchObject({ redis: 'unavailable', database: 'ok' });
  });

  it('answers a wrong API key 401 at once, uncounted, and the right key 200 (Redis still down)', async () => {
    for (let i = 0; i < 3; i += 1) {
      const wrong = await manage(url, 'GET', '/v1/flows', undefined, `wrong-key-${i}-0123456789`);
      expect(wrong.status).toBe(401);
      expect(await wrong.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    }
    expect((await manage(url, 'GET', '/v1/flows')).status).toBe(200);
  });
});
