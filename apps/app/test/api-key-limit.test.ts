import { randomUUID } from 'node:crypto';
import { Writable } from 'node:stream';
import { createLogger } from '@flowbox/node-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import type { AppConfig } from '../src/env.ts';
import { manage, TEST_API_KEY, testAppConfig } from './app-harness.ts';

const MAX_FAILURES = 5;

/** An app whose warn lines are kept, parsed. */
async function appWithLogs(config: AppConfig): Promise<{ app: FlowboxApp; url: string; lines: LogLine[] }> {
  const lines: LogLine[] = [];
  const sink = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const text of chunk.toString('utf8').split('\n')) if (text !== '') lines.push(JSON.parse(text));
      done();
    },
  });
  const app = await createApp(config, createLogger({ name: 'app', level: 'warn' }, sink));
  return { app, url: await startApp(app, { seedBenchmarkFlow: false }), lines };
}

interface LogLine {
  msg: string;
  address?: string;
  component?: string;
}

const refused = async (url: string, answer: 401 | 429) =>
  promSample(
    await (await fetch(`${url}/metrics`)).text(),
    `flowbox_api_key_refused_total{answer="${answer}"}`,
  ) ?? 0;

// Wrong API keys against real Redis (the count every app shares) through two apps on one Redis
// prefix: 401 up to API_KEY_MAX_FAILURES, then 429 with retry-after; the right key always works.
describe('wrong API keys, counted per address', () => {
  let a: Awaited<ReturnType<typeof appWithLogs>>;
  let b: Awaited<ReturnType<typeof appWithLogs>>;

  beforeAll(async () => {
    const config = await testAppConfig({
      API_KEY_MAX_FAILURES: String(MAX_FAILURES),
      API_KEY_FAILURE_WINDOW_SECONDS: '600',
    });
    a = await appWithLogs(config);
    b = await appWithLogs({ ...config, INSTANCE_ID: randomUUID() });
  });
  afterAll(async () => {
    await a?.app.close();
    await b?.app.close();
  });

  it('answers 401 up to the limit, then 429 with retry-after; the right key still works; each is counted', async () => {
    const statuses: number[] = [];
    let limited: Response | undefined;
    for (let i = 0; i < 50; i += 1) {
      const answer = await manage(a.url, 'GET', '/v1/flows', undefined, `wrong-key-${i}-0123456789`);
      statuses.push(answer.status);
      if (answer.status === 429) limited = answer;
      else await answer.arrayBuffer();
    }
    expect(statuses.slice(0, MAX_FAILURES)).toEqual(Array(MAX_FAILURES).fill(401));
    expect(statuses.slice(MAX_FAILURES)).toEqual(Array(50 - MAX_FAILURES).fill(429));
    const retryAfter = Number(limited?.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThan(0);
    expect(retryAfter).toBeLessThanOrEqual(600);
    expect(await limited?.json()).toMatchObject({ error: { code: 'API_KEY_RATE_LIMITED' } });

    // The right key, from the same address in the same window: never counted, never refused.
    for (let i = 0; i < MAX_FAILURES + 2; i += 1) {
      expect((await manage(a.url, 'GET', '/v1/flows', undefined, TEST_API_KEY)).status).toBe(200);
    }
    // A request without a key is not a guess: 401, not counted.
    const bare = await fetch(`${a.url}/v1/flows`);
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });

    expect(await refused(a.url, 401)).toBe(MAX_FAILURES);
    expect(await refused(a.url, 429)).toBe(50 - MAX_FAILURES);
    // Two warn lines for fifty guesses: the address's first wrong key and the one at the limit.
    const warned = a.lines.filter((line) => line.component === 'api-key');
    expect(warned.map((line) => line.msg)).toEqual([
      'wrong API key',
      expect.stringContaining('reached API_KEY_MAX_FAILURES'),
    ]);
    expect(warned.every((line) => line.address === '127.0.0.1')).toBe(true);
  });

  it('shares the count with another app on the same Redis, and keeps another address apart', async () => {
    // The address is already past the limit (the test before): app b refuses its first guess 429.
    const answer = await manage(b.url, 'GET', '/v1/flows', undefined, 'another-wrong-key-0123');
    expect(answer.status).toBe(429);
    expect(await refused(b.url, 429)).toBe(1);
    expect((await manage(b.url, 'GET', '/v1/flows', undefined, TEST_API_KEY)).status).toBe(200);

    const fromElsewhere = await a.app.http.inject({
      method: 'GET',
      url: '/v1/flows',
      remoteAddress: '192.0.2.7',
      headers: { authorization: 'Bearer yet-another-wrong-key' },
    });
    expect(fromElsewhere.statusCode).toBe(401);
    expect(a.lines.some((line) => line.address === '192.0.2.7' && line.msg === 'wrong API key')).toBe(true);
  });
});
