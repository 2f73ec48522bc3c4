// On a real Postgres, Redis and S3 (no worker): the connections API,
// values sealed at rest, publish refusing unknown names, DELETE refusing a used connection, key
// rotation, and signed webhooks refused before any run exists.
import { createHmac, randomBytes } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import { BENCHMARK_FLOW, type FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import type { AppConfig } from '../src/env.ts';
import { manage, startTestApp, testAppConfig } from './app-harness.ts';

const KEY_1 = randomBytes(32).toString('base64');
const KEY_2 = randomBytes(32).toString('base64');
const GITHUB_SECRET = 'gh-webhook-secret-0123456789';
const STRIPE_SECRET = 'whsec_stripe_0123456789';

/** The benchmark flow, whose code step's input names a connection. */
const usingConnection = (name: string): FlowDefinition => ({
  ...BENCHMARK_FLOW,
  steps: BENCHMARK_FLOW.steps.map((step) =>
    step.type === 'code' ? { ...step, input: { ...step.input, token: `{{connections.${name}}}` } } : step,
  ),
});

const signed = (verify: Record<string, unknown>): FlowDefinition =>
  ({ ...BENCHMARK_FLOW, trigger: { ...BENCHMARK_FLOW.trigger, verify } }) as FlowDefinition;

describe('connections and signed webhooks (no worker attached)', () => {
  let app: FlowboxApp;
  let url: string;
  let config: AppConfig;
  let pool: Pool;
  const api = (method: string, path: string, body?: unknown) => manage(url, method, path, body);
  const runCount = async () =>
    Number((await pool.query<{ n: string }>('SELECT count(*) AS n FROM runs')).rows[0]?.n);

  beforeAll(async () => {
    ({ app, url, config } = await startTestApp({ CONNECTIONS_KEY: KEY_1 }));
    pool = createPool(config.DATABASE_URL, 2);
  });
  afterAll(async () => {
    await app?.close();
    await pool?.end();
  });

  it('keeps values sealed and never shows them', async () => {
    const created = await api('POST', '/v1/connections', {
      name: 'api_token',
      value: 'sk-live-abcdef123456',
    });
    expect(created.status).toBe(201);
    const text = await created.text();
    expect(text).not.toContain('sk-live');
    expect(JSON.parse(text)).toMatchObject({ name: 'api_token', usedBy: [] });

    expect((await api('POST', '/v1/connections', { name: 'api_token', value: 'x' })).status).toBe(409);
    const json = await api('POST', '/v1/connections', {
      name: 'db',
      value: { user: 'u', password: 'pw-0123456789' },
    });
    expect(json.status).toBe(201);

    const { rows } = await pool.query<{ ciphertext: Buffer; key_id: string }>(
      "SELECT ciphertext, key_id FROM connections WHERE name = 'api_token'",
    );
    expect(rows[0]?.ciphertext.includes(Buffer.from('sk-live'))).toBe(false);
    expect(rows[0]?.key_id).toMatch(/^[0-9a-f]{16}$/);

    const listed = await api('GET', '/v1/connections');
    const listText = await listed.text();
    expect(listText).not.toContain('sk-live');
    expect(listText).not.toContain('pw-0123456789');
    expect(
      (JSON.parse(listText) as { connections: Array<{ name: string }> }).connections.map((c) => c.name),
    ).toEqual(['api_token', 'db']);
    const put = await api('PUT', '/v1/connections/api_token', { value: 'sk-live-rotated-0000' });
    expect(put.status).toBe(200);
    expect(await put.text()).not.toContain('sk-live');
    expect((await api('GET', '/v1/connections/nope')).status).toBe(404);
    expect((await api('PUT', '/v1/connections/nope', { value: 'v' })).status).toBe(404);
  });

  it('answers 400 to a bad name or a value over the cap', async () => {
    for (const body of [
      { name: 'Bad-Name', value: 'v' },
      { name: '1abc', value: 'v' },
      { name: 'big', value: 'x'.repeat(9_000) },
      { name: 'big', value: { blob: 'x'.repeat(9_000) } },
      { name: 'empty', value: '' },
      { name: 'list', value: [1, 2] },
    ]) {
      const answer = await api('POST', '/v1/connections', body);
      expect(answer.status, JSON.stringify(body).slice(0, 60)).toBe(400);
      expect(await answer.json()).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    }
  });

  it('refuses to publish a flow naming an unknown connection, and to delete one a published flow uses', async () => {
    const unknown = await api('POST', '/v1/flows', {
      id: 'uses-missing',
      name: 'x',
      definition: usingConnection('missing_one'),
      publish: true,
    });
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error: { code: 'INVALID_FLOW', message: expect.stringContaining('missing_one') },
    });
    const reserved = await api('POST', '/v1/flows', {
      name: 'x',
      definition: {
        ...BENCHMARK_FLOW,
        steps: [{ type: 'code', name: 'connections', code: 'return 1', input: {} }],
      },
    });
    expect(reserved.status).toBe(400);

    await api('POST', '/v1/connections', { name: 'doomed', value: 'doomed-value-1234' });
    const flow = await api('POST', '/v1/flows', {
      id: 'uses-doomed',
      name: 'x',
      definition: usingConnection('doomed'),
      publish: true,
    });
    expect(flow.status).toBe(201);
    expect(await (await api('GET', '/v1/connections/doomed')).json()).toMatchObject({
      usedBy: [{ flowId: 'uses-doomed', flowVersionId: 'uses-doomed-v1' }],
    });
    const refused = await api('DELETE', '/v1/connections/doomed');
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      error: { code: 'CONNECTION_IN_USE', message: expect.stringContaining('uses-doomed-v1') },
    });
    // A version without it published: the connection is free to go.
    const v2 = await api('POST', '/v1/flows/uses-doomed/versions', {
      definition: BENCHMARK_FLOW,
      publish: true,
    });
    expect(v2.status).toBe(201);
    expect((await api('DELETE', '/v1/connections/doomed')).status).toBe(204);
    expect((await api('DELETE', '/v1/connections/doomed')).status).toBe(404);
  });

  describe('signed webhooks', () => {
    const post = (flowId: string, body: string, headers: Record<string, string>) =>
      fetch(`${url}/v1/webhooks/${flowId}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...headers },
        body,
      });
    const refusedCount = async (scheme: string) =>
      promSample(
        await (await fetch(`${url}/metrics`)).text(),
        `flowbox_webhook_signature_refused_total{scheme="${scheme}"}`,
      ) ?? 0;

    beforeAll(async () => {
      await api('POST', '/v1/connections', { name: 'github', value: GITHUB_SECRET });
      await api('POST', '/v1/connections', { name: 'stripe', value: { signing: STRIPE_SECRET } });
      for (const [id, verify] of Object.entries({
        'github-signed': {
          scheme: 'hmac-sha256',
          header: 'x-hub-signature-256',
          prefix: 'sha256=',
          encoding: 'hex',
          secret: '{{connections.github}}',
        },
        'stripe-signed': { scheme: 'stripe', secret: '{{connections.stripe.signing}}' },
      })) {
        const created = await api('POST', '/v1/flows', {
          id,
          name: id,
          definition: signed(verify),
          publish: true,
        });
        expect(created.status, await created.clone().text()).toBe(201);
      }
    });

    it('takes a GitHub-style signed webhook and refuses a tampered, missing or repeated one with no run', async () => {
      const body = JSON.stringify({ action: 'opened', number: 7 });
      const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
      expect((await post('github-signed', body, { 'x-hub-signature-256': signature })).status).toBe(202);

      const before = await runCount();
      const refusedBefore = await refusedCount('hmac-sha256');
      const tamperedBody = body.replace('7', '8');
      const tamperedHeader = `${signature.slice(0, -1)}${signature.endsWith('0') ? '1' : '0'}`;
      for (const [what, answer] of [
        ['body', await post('github-signed', tamperedBody, { 'x-hub-signature-256': signature })],
        ['header', await post('github-signed', body, { 'x-hub-signature-256': tamperedHeader })],
        ['missing', await post('github-signed', body, {})],
      ] as const) {
        expect(answer.status, what).toBe(401);
        expect(await answer.json()).toMatchObject({ error: { code: 'WEBHOOK_SIGNATURE_INVALID' } });
      }
      // The same header twice, as raw headers (fetch would join them).
      const twice = new Headers({ 'content-type': 'application/json' });
      twice.append('x-hub-signature-256', signature);
      twice.append('x-hub-signature-256', signature);
      const repeated = await fetch(`${url}/v1/webhooks/github-signed`, {
        method: 'POST',
        headers: twice,
        body,
      });
      expect(repeated.status).toBe(401);
      expect(await runCount()).toBe(before);
      expect(await refusedCount('hmac-sha256')).toBe(refusedBefore + 4);
    });

    it('checks a body that is not UTF-8 on its bytes as sent, not on its decoded text', async () => {
      // Latin-1 `é` (0xe9) and a stray 0xff: not UTF-8, so the text decoded from them holds U+FFFD.
      const bytes = Buffer.concat([
        Buffer.from('{"name":"caf'),
        Buffer.from([0xe9, 0xff]),
        Buffer.from('"}'),
      ]);
      const decoded = Buffer.from(bytes.toString('utf8'), 'utf8');
      expect(decoded.equals(bytes)).toBe(false);
      const sign = (signed: Buffer) =>
        `sha256=${createHmac('sha256', GITHUB_SECRET).update(signed).digest('hex')}`;
      const send = (signature: string) =>
        fetch(`${url}/v1/webhooks/github-signed`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
          body: bytes,
        });
      const before = await runCount();
      const overBytes = await send(sign(bytes));
      expect(overBytes.status, await overBytes.clone().text()).toBe(202);
      expect(await runCount()).toBe(before + 1);
      const overText = await send(sign(decoded));
      expect(overText.status).toBe(401);
      expect(await overText.json()).toMatchObject({ error: { code: 'WEBHOOK_SIGNATURE_INVALID' } });
      expect(await runCount()).toBe(before + 1);
    });

    it('takes a Stripe-style signed webhook within its tolerance and refuses a stale or tampered one', async () => {
      const body = JSON.stringify({ type: 'invoice.paid' });
      const sign = (t: number, payload = body) =>
        `t=${t},v1=${createHmac('sha256', STRIPE_SECRET).update(`${t}.${payload}`).digest('hex')}`;
      const now = Math.floor(Date.now() / 1000);
      expect((await post('stripe-signed', body, { 'stripe-signature': sign(now) })).status).toBe(202);
      const before = await runCount();
      expect((await post('stripe-signed', `${body} `, { 'stripe-signature': sign(now) })).status).toBe(401);
      expect((await post('stripe-signed', body, { 'stripe-signature': sign(now - 3_600) })).status).toBe(401);
      expect((await post('stripe-signed', body, { 'stripe-signature': `t=${now}` })).status).toBe(401);
      expect(await runCount()).toBe(before);
    });

    it('checks with a rotated secret once the connection is changed on this app', async () => {
      const body = '{}';
      const sign = (secret: string) => `sha256=${createHmac('sha256', secret).update(body).digest('hex')}`;
      expect((await post('github-signed', body, { 'x-hub-signature-256': sign(GITHUB_SECRET) })).status).toBe(
        202,
      );
      await api('PUT', '/v1/connections/github', { value: 'gh-rotated-secret-9876' });
      expect((await post('github-signed', body, { 'x-hub-signature-256': sign(GITHUB_SECRET) })).status).toBe(
        401,
      );
      expect(
        (await post('github-signed', body, { 'x-hub-signature-256': sign('gh-rotated-secret-9876') })).status,
      ).toBe(202);
      await api('PUT', '/v1/connections/github', { value: GITHUB_SECRET });
    });
  });

  it('rotates the key: a new key with the old as previous reseals every row; without a key it refuses to start', async () => {
    await app.close();
    const logger = createLogger({ name: 'app', level: 'silent' });
    const sameStores = { DATABASE_URL: config.DATABASE_URL, S3_BUCKET: config.S3_BUCKET };

    const keyless = await createApp(await testAppConfig(sameStores), logger);
    await expect(startApp(keyless, { seedBenchmarkFlow: false })).rejects.toThrow(/CONNECTIONS_KEY/);
    await keyless.close();
    const wrongKey = await createApp(await testAppConfig({ ...sameStores, CONNECTIONS_KEY: KEY_2 }), logger);
    await expect(startApp(wrongKey, { seedBenchmarkFlow: false })).rejects.toThrow(
      /CONNECTIONS_KEY_PREVIOUS/,
    );
    await wrongKey.close();

    const rotated = await createApp(
      await testAppConfig({ ...sameStores, CONNECTIONS_KEY: KEY_2, CONNECTIONS_KEY_PREVIOUS: KEY_1 }),
      logger,
    );
    await startApp(rotated, { seedBenchmarkFlow: false });
    await rotated.close();
    const { rows } = await pool.query<{ key_id: string }>('SELECT DISTINCT key_id FROM connections');
    expect(rows).toHaveLength(1);

    // The old key can go: the new one alone opens every row (the signed webhook's secret).
    const config2 = await testAppConfig({ ...sameStores, CONNECTIONS_KEY: KEY_2 });
    app = await createApp(config2, logger);
    url = await startApp(app, { seedBenchmarkFlow: false });
    const body = '{}';
    const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
    const answer = await fetch(`${url}/v1/webhooks/github-signed`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-hub-signature-256': signature },
      body,
    });
    expect(answer.status).toBe(202);
  });
});
