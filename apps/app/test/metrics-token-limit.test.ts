import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import type { FlowboxApp } from '../src/app.ts';
import { manage, startTestApp } from './app-harness.ts';

const MAX_FAILURES = 3;
const TOKEN = 'metrics-token-0123456789';

// Wrong METRICS_TOKENs against real Redis, limited per address as wrong API keys are (the same
// API_KEY_MAX_FAILURES and window), in a count of their own.
describe('wrong metrics tokens, counted per address', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp({
      METRICS_TOKEN: TOKEN,
      API_KEY_MAX_FAILURES: String(MAX_FAILURES),
      API_KEY_FAILURE_WINDOW_SECONDS: '600',
    }));
  });
  afterAll(async () => {
    await app.close();
  });

  const scrape = (authorization?: string) =>
    fetch(`${url}/metrics`, { headers: authorization === undefined ? {} : { authorization } });
  const refused = async (answer: 401 | 429) =>
    promSample(
      await (await scrape(`Bearer ${TOKEN}`)).text(),
      `flowbox_metrics_token_refused_total{answer="${answer}"}`,
    ) ?? 0;

  it('answers 401 up to the limit, then 429 with retry-after; the right token still works; each is counted', async () => {
    const statuses: number[] = [];
    let limited: { status: number; retryAfter: string | null; body: string } | undefined;
    for (let i = 0; i < 10; i += 1) {
      const answer = await scrape(`Bearer wrong-token-${i}-0123456789`);
      const body = await answer.text();
      statuses.push(answer.status);
      // No metric leaks into a refusal.
      expect(body).not.toContain('flowbox_');
      if (answer.status === 429)
        limited = { status: 429, retryAfter: answer.headers.get('retry-after'), body };
    }
    expect(statuses).toEqual([...Array(MAX_FAILURES).fill(401), ...Array(10 - MAX_FAILURES).fill(429)]);
    expect(Number(limited?.retryAfter)).toBeGreaterThan(0);
    expect(Number(limited?.retryAfter)).toBeLessThanOrEqual(600);
    expect(JSON.parse(limited?.body ?? '{}')).toMatchObject({
      error: { code: 'API_KEY_RATE_LIMITED', message: expect.stringContaining('metrics tokens') },
    });

    // The right token from the same address in the same window: never refused.
    expect((await scrape(`Bearer ${TOKEN}`)).status).toBe(200);
    expect(await refused(401)).toBe(MAX_FAILURES);
    expect(await refused(429)).toBe(10 - MAX_FAILURES);

    // A scrape without a token is not a guess: 401, not counted.
    const bare = await scrape();
    expect(bare.status).toBe(401);
    expect(await bare.json()).toMatchObject({ error: { code: 'UNAUTHORIZED' } });
    expect(await refused(401)).toBe(MAX_FAILURES);

    // Wrong API keys have their own count: the address's first one is a 401, not a 429.
    const wrongKey = await manage(url, 'GET', '/v1/flows', undefined, 'wrong-key-0123456789');
    expect(wrongKey.status).toBe(401);
  });
});
