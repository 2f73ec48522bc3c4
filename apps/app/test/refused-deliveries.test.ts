// On a real Postgres, Redis and S3 (no worker): webhooks refused before any run existed are kept
// per flow, without credentials, bounded, and listed by the API.
import { randomBytes } from 'node:crypto';
import { BENCHMARK_FLOW, type FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { REFUSALS_PER_FLOW_PER_WINDOW } from '../src/deliveries/refused-deliveries.ts';
import { createRefusedDeliveriesRepository } from '../src/deliveries/refused-deliveries-repository.ts';
import type { RefusedDeliveryView } from '../src/http/views/refused-delivery-view.ts';
import { RUN_ID_HEADER } from '../src/http/webhook-routes.ts';
import { manage, startTestApp } from './app-harness.ts';

const GITHUB_SECRET = 'gh-webhook-secret-0123456789';

const signed: FlowDefinition = {
  ...BENCHMARK_FLOW,
  trigger: {
    ...BENCHMARK_FLOW.trigger,
    verify: {
      scheme: 'hmac-sha256',
      header: 'x-hub-signature-256',
      prefix: 'sha256=',
      encoding: 'hex',
      secret: '{{connections.github}}',
    },
  },
} as FlowDefinition;

describe('refused webhook deliveries (no worker attached)', () => {
  let app: FlowboxApp;
  let url: string;
  let pool: Pool;
  const api = (method: string, path: string, body?: unknown) => manage(url, method, path, body);
  const runCount = async () =>
    Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM runs')).rows[0]?.n);
  const refused = async (flowId: string): Promise<RefusedDeliveryView[]> => {
    const answer = await api('GET', `/v1/flows/${flowId}/deliveries/refused?limit=1000`);
    expect(answer.status).toBe(200);
    return ((await answer.json()) as { deliveries: RefusedDeliveryView[] }).deliveries;
  };
  /** Waits until the flow's list (written once a second) satisfies `check`. */
  const refusedUntil = (flowId: string, check: (rows: RefusedDeliveryView[]) => boolean) =>
    vi.waitFor(
      async () => {
        const rows = await refused(flowId);
        if (!check(rows)) throw new Error(`${flowId}: ${rows.length} refusals so far`);
        return rows;
      },
      { timeout: 15_000, interval: 100 },
    );
  const post = (path: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${url}/v1/webhooks/${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
    });

  beforeAll(async () => {
    const started = await startTestApp({
      CONNECTIONS_KEY: randomBytes(32).toString('base64'),
      FLOW_MAX_QUEUED_RUNS: '1',
      REFUSED_DELIVERIES_PER_FLOW: '100',
    });
    ({ app, url } = started);
    pool = createPool(started.config.DATABASE_URL, 2);
    expect((await api('POST', '/v1/connections', { name: 'github', value: GITHUB_SECRET })).status).toBe(201);
    for (const [id, definition] of [
      ['signed', signed],
      ['flooded', signed],
      ['plain', BENCHMARK_FLOW],
      ['switched-off', BENCHMARK_FLOW],
      ['busy', BENCHMARK_FLOW],
    ] as const) {
      const created = await api('POST', '/v1/flows', { id, name: id, definition, publish: true });
      expect(created.status, await created.clone().text()).toBe(201);
    }
  });
  afterAll(async () => {
    await app?.close();
    await pool?.end();
  });

  it('keeps a refused signature with its reason, source and headers, without any credential', async () => {
    const before = await runCount();
    const answer = await post('signed', '{"action":"opened"}', {
      authorization: 'Bearer live-token-0123456789',
      cookie: 'session=abcdef0123456789',
      'x-hub-signature-256': 'sha256=0000',
      'x-hub-signature': 'sha1=0000',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'delivery-1',
    });
    expect(answer.status).toBe(401);
    expect(answer.headers.get(RUN_ID_HEADER)).toBeNull();
    const [row, ...more] = await refusedUntil('signed', (rows) => rows.length > 0);
    expect(more).toEqual([]);
    expect(row).toMatchObject({
      code: 'WEBHOOK_SIGNATURE_INVALID',
      message: expect.stringContaining('x-hub-signature-256'),
      httpStatus: 401,
      method: 'POST',
      sync: false,
      suppressed: 0,
    });
    expect(row?.sourceAddress).toMatch(/127\.0\.0\.1|::1/);
    expect(Date.now() - Date.parse(row?.receivedAt ?? '')).toBeLessThan(60_000);
    expect(row?.headers).toMatchObject({
      'content-type': 'application/json',
      'x-github-event': 'pull_request',
      'x-github-delivery': 'delivery-1',
    });
    for (const secret of ['authorization', 'cookie', 'x-hub-signature-256', 'x-hub-signature']) {
      expect(row?.headers, secret).not.toHaveProperty(secret);
    }
    expect(JSON.stringify(row)).not.toContain('live-token');
    // Refused and kept, and still no run.
    expect(await runCount()).toBe(before);
  });

  it('keeps bodies refused as too large or not JSON, on the sync route too', async () => {
    expect((await post('plain/sync', '{"unterminated": ')).status).toBe(400);
    expect((await post('plain', JSON.stringify({ blob: 'x'.repeat(1_100_000) }))).status).toBe(413);
    const rows = await refusedUntil('plain', (list) => list.length >= 2);
    expect(rows.map((row) => [row.code, row.httpStatus, row.sync])).toEqual([
      ['BODY_TOO_LARGE', 413, false],
      ['INVALID_BODY', 400, true],
    ]);
  });

  it("keeps a disabled flow's refusals and a full flow queue's, never an unknown flow's", async () => {
    expect((await api('PATCH', '/v1/flows/switched-off', { enabled: false })).status).toBe(200);
    expect((await post('switched-off', '{}')).status).toBe(404);
    const [disabled] = await refusedUntil('switched-off', (rows) => rows.length > 0);
    expect(disabled).toMatchObject({ code: 'FLOW_NOT_FOUND', httpStatus: 404 });

    // FLOW_MAX_QUEUED_RUNS=1 and no worker: the second run of the flow has no room.
    expect((await post('busy', '{}')).status).toBe(202);
    expect((await post('busy', '{}')).status).toBe(429);
    const [full] = await refusedUntil('busy', (rows) => rows.length > 0);
    expect(full).toMatchObject({ code: 'FLOW_QUEUE_FULL', httpStatus: 429 });

    expect((await post('no-such-flow', '{}')).status).toBe(404);
    expect((await api('GET', '/v1/flows/no-such-flow/deliveries/refused')).status).toBe(404);
    const stored = await pool.query(`SELECT 1 FROM refused_deliveries WHERE flow_id = 'no-such-flow'`);
    expect(stored.rowCount).toBe(0);
  });

  it('folds a flood into a few rows a second, counting every refusal', async () => {
    const sent = 300;
    const answers = await Promise.all(
      Array.from({ length: sent }, () => post('flooded', '{}', { 'x-hub-signature-256': 'sha256=bad' })),
    );
    expect(answers.every((answer) => answer.status === 401)).toBe(true);
    const counted = (rows: RefusedDeliveryView[]) => rows.reduce((sum, row) => sum + 1 + row.suppressed, 0);
    const rows = await refusedUntil('flooded', (list) => counted(list) === sent);
    // At most REFUSALS_PER_FLOW_PER_WINDOW rows for each second the flood lasted.
    const seconds = new Set(rows.map((row) => Math.floor(Date.parse(row.receivedAt) / 1000)));
    expect(rows.length).toBeLessThanOrEqual(REFUSALS_PER_FLOW_PER_WINDOW * (seconds.size + 1));
    expect(rows.length).toBeLessThan(sent);
    expect(rows.some((row) => row.suppressed > 0)).toBe(true);
  });

  it('keeps only the newest REFUSED_DELIVERIES_PER_FLOW of a flow', async () => {
    const repository = createRefusedDeliveriesRepository(pool);
    const at = Date.now();
    const row = (n: number) => ({
      flowId: 'plain',
      receivedAt: new Date(at + n * 1000),
      code: 'INVALID_BODY',
      message: `refusal ${n}`,
      httpStatus: 400,
      method: 'POST',
      sync: false,
      sourceAddress: '192.0.2.1',
      headers: {},
      suppressed: 0,
    });
    expect(await repository.insert([1, 2, 3, 4, 5].map(row), 3)).toBe(5);
    expect((await repository.list('plain', 10)).map((kept) => kept.message)).toEqual([
      'refusal 5',
      'refusal 4',
      'refusal 3',
    ]);
  });
});

describe('refused webhook deliveries past the global queue bound (no worker attached)', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    // One run may wait across all flows: the benchmark flow's second webhook finds the queue full.
    ({ app, url } = await startTestApp({ WEBHOOK_MAX_QUEUED_RUNS: '1' }));
  });
  afterAll(async () => {
    await app?.close();
  });

  it('keeps a webhook refused 503 QUEUE_FULL before its body was read', async () => {
    const send = () =>
      fetch(`${url}/v1/webhooks/benchmark`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: '{}',
      });
    expect((await send()).status).toBe(202);
    expect((await send()).status).toBe(503);
    const rows = await vi.waitFor(
      async () => {
        const answer = await manage(url, 'GET', '/v1/flows/benchmark/deliveries/refused');
        const { deliveries } = (await answer.json()) as { deliveries: RefusedDeliveryView[] };
        if (deliveries.length === 0) throw new Error('not written yet');
        return deliveries;
      },
      { timeout: 15_000, interval: 100 },
    );
    expect(rows).toMatchObject([{ code: 'QUEUE_FULL', httpStatus: 503, sync: false }]);
  });
});
