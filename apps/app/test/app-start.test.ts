import { createServer, type Server } from 'node:net';
import { createLogger } from '@flowbox/node-kit';
import { afterAll, describe, expect, it } from 'vitest';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import { manage, TEST_API_KEY, testAppConfig } from './app-harness.ts';

const silent = () => createLogger({ name: 'app', level: 'silent' });

/** A TCP listener standing in for Postgres and Redis that counts who connects to it. */
async function countingListener(): Promise<{
  server: Server;
  url: (scheme: string) => string;
  connections: () => number;
}> {
  let connections = 0;
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return { server, url: (scheme) => `${scheme}://127.0.0.1:${port}/flowbox`, connections: () => connections };
}

describe('building the app apart from starting it', () => {
  const apps: FlowboxApp[] = [];
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
  });

  it('builds with no side effects: no connection is opened, and routes answer through inject()', async () => {
    const stores = await countingListener();
    const config = await testAppConfig({
      DATABASE_URL: stores.url('postgres'),
      REDIS_URL: stores.url('redis'),
    });
    const app = await createApp(config, silent());
    const live = await app.http.inject({ method: 'GET', url: '/health/live' });
    expect(live.statusCode).toBe(200);
    const unauthorised = await app.http.inject({ method: 'GET', url: '/v1/flows' });
    expect(unauthorised.statusCode).toBe(401);
    expect(stores.connections()).toBe(0);
    expect(app.http.server.listening).toBe(false);
    await app.close();
    stores.server.close();
  });

  it('seeds the benchmark flow only when asked', async () => {
    const unseeded = await createApp(await testAppConfig({ SEED_BENCHMARK_FLOW: 'false' }), silent());
    apps.push(unseeded);
    const plainUrl = await startApp(unseeded, { seedBenchmarkFlow: false });
    expect((await manage(plainUrl, 'GET', '/v1/flows/benchmark', undefined, TEST_API_KEY)).status).toBe(404);
    const webhook = await fetch(`${plainUrl}/v1/webhooks/benchmark/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{}',
    });
    expect(webhook.status).toBe(404);

    const seeded = await createApp(await testAppConfig(), silent());
    apps.push(seeded);
    const seededUrl = await startApp(seeded, { seedBenchmarkFlow: true });
    const flow = await manage(seededUrl, 'GET', '/v1/flows/benchmark', undefined, TEST_API_KEY);
    expect(flow.status).toBe(200);
  });
});
