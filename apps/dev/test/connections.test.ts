// On a real stack (Postgres, a private Redis, S3, an app and a worker):
// a connection's value reaches the service the flow calls and nothing else: not the run's JSON,
// its S3 log, the app's or worker's logs, or any Redis key after the run, in any spelling the
// http piece gives it (URL, query, form, JSON) when a service echoes it back. A failed run re-runs
// once its connection is fixed; a run whose connection was deleted fails CONNECTION_MISSING; a
// signed sync webhook runs and answers 200.
import { createHmac } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchRunLog, manage } from '../../app/test/app-harness.ts';
import { type FaultStack, startFaultStack, waitForFinal } from './faults/fault-harness.ts';
import { RedisWire } from './faults/redis-wire.ts';

const SECRET = 'sk-live-7f3c9a1e5b2d4c6f8a0e';
const CALLER_TOKEN = 'caller-token-d41d8cd98f00b204';
const GITHUB_SECRET = 'gh-hook-secret-e3b0c44298fc';
/** A value that every encoding spells differently: spaces, `+`, `/`, a quote, `&`, `=`, `~`, non-ASCII. */
const SPACED_SECRET = 'open sesame+42/"quoted"&=~\u00e9';

/** Answers 200 to the right bearer token and 401 to any other; keeps every token it got. */
async function startService(): Promise<{
  port: number;
  tokens: string[];
  echoed: string[];
  close(): Promise<void>;
}> {
  const tokens: string[] = [];
  const echoed: string[] = [];
  const server: Server = createServer((request, response) => {
    if (request.url?.startsWith('/echo') === true) return echo(request, response, echoed);
    const token = (request.headers.authorization ?? '').replace(/^Bearer /, '');
    tokens.push(token);
    request.resume();
    request.on('end', () => {
      response.writeHead(token === SECRET ? 200 : 401, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ ok: token === SECRET }));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    port: (server.address() as AddressInfo).port,
    tokens,
    echoed,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** Answers with the request as it arrived: its URL and its body, as text inside JSON; keeps both. */
function echo(request: IncomingMessage, response: ServerResponse, echoed: string[]): void {
  const chunks: Buffer[] = [];
  request.on('data', (chunk: Buffer) => chunks.push(chunk));
  request.on('end', () => {
    echoed.push(request.url ?? '', Buffer.concat(chunks).toString('utf8'));
    response.writeHead(200, { 'content-type': 'application/json', 'x-echo-url': request.url ?? '' });
    response.end(JSON.stringify({ url: request.url, body: Buffer.concat(chunks).toString('utf8') }));
  });
}

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };

/**
 * The http piece calls the service with the connection as a bearer token; a code step calls it
 * again with `fetch`, logs the token and returns it (all of which must be shown redacted), and
 * fails unless the service said 200.
 */
const flowCalling = (port: number, connection: string) =>
  ({
    trigger: TRIGGER,
    steps: [
      {
        type: 'piece',
        name: 'call',
        piece: 'http',
        action: 'send_request',
        input: {
          method: 'POST',
          url: `http://127.0.0.1:${port}/piece`,
          headers: { authorization: `Bearer {{connections.${connection}}}` },
          body: { note: 'from the http piece' },
        },
      },
      {
        type: 'code',
        name: 'check',
        code: [
          "const answer = await fetch(inputs.url, { headers: { authorization: 'Bearer ' + inputs.token } });",
          "console.log('called with', inputs.token, 'caller sent', inputs.caller.authorization);",
          "if (inputs.status !== 200 || answer.status !== 200) throw new Error('refused: ' + inputs.token);",
          'return { status: answer.status, echoed: inputs.token };',
        ].join('\n'),
        input: {
          url: `http://127.0.0.1:${port}/code`,
          token: `{{connections.${connection}}}`,
          caller: '{{trigger.headers}}',
          status: '{{call.status}}',
        },
      },
      {
        type: 'piece',
        name: 'respond',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: { status: '{{check.status}}' } },
      },
    ],
  }) as unknown as FlowDefinition;

/**
 * The http piece sends the connection in each of its encodings to a service that echoes the
 * request back: in the URL's own query (the URL parser's `%20`), as a `query` parameter and a form
 * field (`+` for a space), and inside a JSON body; the echo is kept as text (`responseType: text`)
 * and parsed (`json`), and a code step returns it whole.
 */
const flowEchoing = (port: number, connection: string) =>
  ({
    trigger: TRIGGER,
    steps: [
      {
        type: 'piece',
        name: 'in_url',
        piece: 'http',
        action: 'send_request',
        input: {
          method: 'POST',
          url: `http://127.0.0.1:${port}/echo/url?key={{connections.${connection}}}`,
          bodyType: 'json',
          body: { key: `{{connections.${connection}}}` },
          responseType: 'text',
        },
      },
      {
        type: 'piece',
        name: 'in_form',
        piece: 'http',
        action: 'send_request',
        input: {
          method: 'POST',
          url: `http://127.0.0.1:${port}/echo/form`,
          query: { key: `{{connections.${connection}}}` },
          bodyType: 'form',
          body: { key: `{{connections.${connection}}}` },
          responseType: 'json',
        },
      },
      {
        type: 'code',
        name: 'passes_on',
        code: 'return { url: inputs.url, form: inputs.form };',
        input: { url: '{{in_url.body}}', form: '{{in_form.body}}' },
      },
      {
        type: 'piece',
        name: 'respond',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: { done: true } },
      },
    ],
  }) as unknown as FlowDefinition;

/** Every key and every value, read by type (DUMP's encoding could compress a value out of sight). */
async function redisContents(redis: RedisWire): Promise<string> {
  const read: Record<string, (key: string) => string[]> = {
    string: (key) => ['GET', key],
    hash: (key) => ['HGETALL', key],
    list: (key) => ['LRANGE', key, '0', '-1'],
    set: (key) => ['SMEMBERS', key],
    zset: (key) => ['ZRANGE', key, '0', '-1'],
    stream: (key) => ['XRANGE', key, '-', '+'],
  };
  const parts: string[] = [];
  let cursor = '0';
  do {
    const [next, keys] = (await redis.command('SCAN', cursor, 'COUNT', '500')) as [string, string[]];
    cursor = next;
    for (const key of keys) {
      const type = String(await redis.command('TYPE', key));
      const command = read[type];
      parts.push(
        key,
        command === undefined ? `<${type}>` : JSON.stringify(await redis.command(...command(key))),
      );
    }
  } while (cursor !== '0');
  return parts.join('\n');
}

describe('connections through a real stack', () => {
  let fault: FaultStack;
  let service: Awaited<ReturnType<typeof startService>>;
  const api = (method: string, path: string, body?: unknown) =>
    manage(fault.url, method, path, body, fault.stack.apiKey);
  const sync = (flowId: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`${fault.url}/v1/webhooks/${flowId}/sync`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body,
      signal: AbortSignal.timeout(30_000),
    });

  beforeAll(async () => {
    service = await startService();
    fault = await startFaultStack({
      redis: 'private',
      workerEnv: { EGRESS: `127.0.0.1:${service.port}` },
    });
    expect((await api('POST', '/v1/connections', { name: 'service', value: SECRET })).status).toBe(201);
    const created = await api('POST', '/v1/flows', {
      id: 'calls',
      name: 'calls',
      definition: flowCalling(service.port, 'service'),
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);
  });
  afterAll(async () => {
    await fault?.close();
    await service?.close();
  });

  it('sends the value to the service and shows it nowhere', async () => {
    const answer = await sync('calls', '{}', { authorization: `Bearer ${CALLER_TOKEN}` });
    expect(answer.status).toBe(200);
    expect(await answer.json()).toEqual({ status: 200 });
    expect(service.tokens.slice(-2)).toEqual([SECRET, SECRET]);

    const runId = answer.headers.get('x-flowbox-run-id') ?? '';
    const run = await waitForFinal(fault, runId);
    expect(run.status).toBe('SUCCEEDED');
    const runJson = JSON.stringify(run);
    expect(runJson).toContain('[connection:service]');
    expect(runJson).toContain('[header:authorization]');
    const check = run.steps.find((step) => step.name === 'check') as
      | { output?: unknown; logs?: unknown }
      | undefined;
    expect(check?.output).toEqual({ status: 200, echoed: '[connection:service]' });
    expect(JSON.stringify(check?.logs)).toContain(
      'called with [connection:service] caller sent [header:authorization]',
    );

    expect(run.logUrl).not.toBeNull();
    const log = await (await fetchRunLog(run.logUrl)).text();
    expect(log).toContain('[connection:service]');

    const redis = await RedisWire.open(fault.redis?.url ?? '');
    let redisText: string;
    try {
      redisText = await redisContents(redis);
    } finally {
      await redis.close();
    }
    expect(redisText.length).toBeGreaterThan(0);
    const logs = fault.lines.map(({ line }) => line.raw).join('\n');
    expect(logs).toContain(runId);
    for (const [where, text] of Object.entries({ runJson, log, redisText, logs })) {
      expect(text.includes(SECRET), `${where} holds the connection's value`).toBe(false);
    }
    for (const [where, text] of Object.entries({ runJson, log, logs })) {
      expect(text.includes(CALLER_TOKEN), `${where} holds the caller's token`).toBe(false);
    }
  });

  it("shows the http piece's query, form and JSON encodings of a value echoed back redacted", async () => {
    await api('POST', '/v1/connections', { name: 'spaced', value: SPACED_SECRET });
    const created = await api('POST', '/v1/flows', {
      id: 'echoes',
      name: 'echoes',
      definition: flowEchoing(service.port, 'spaced'),
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const before = service.echoed.length;
    const answer = await sync('echoes', '{}');
    expect(answer.status, await answer.clone().text()).toBe(200);
    const run = await waitForFinal(fault, answer.headers.get('x-flowbox-run-id') ?? '');
    expect(run.status, JSON.stringify(run.error)).toBe('SUCCEEDED');

    // What the service received: each encoding the piece produces, so each must be recognised.
    const received = service.echoed.slice(before).join('\n');
    const spellings = {
      'URL parser (%20)': new URL(`http://h/?${SPACED_SECRET}`).search.slice(1),
      'form (+)': new URLSearchParams([['', SPACED_SECRET]]).toString().slice(1),
      JSON: JSON.stringify(SPACED_SECRET).slice(1, -1),
    };
    for (const [name, spelling] of Object.entries(spellings)) {
      expect(received, `the service received the ${name} spelling`).toContain(spelling);
    }

    const runJson = JSON.stringify(run);
    expect(runJson).toContain('[connection:spaced]');
    const log = await (await fetchRunLog(run.logUrl)).text();
    const logs = fault.lines.map(({ line }) => line.raw).join('\n');
    for (const [where, text] of Object.entries({ runJson, log, logs })) {
      for (const [name, spelling] of Object.entries({ raw: SPACED_SECRET, ...spellings })) {
        expect(text.includes(spelling), `${where} holds the ${name} spelling`).toBe(false);
        expect(text.includes(JSON.stringify(spelling).slice(1, -1)), `${where} holds it JSON-escaped`).toBe(
          false,
        );
      }
      expect(text).not.toMatch(/open(\+|%20| )sesame/);
    }
  });

  it("re-runs a failed run once the flow's connection is fixed", async () => {
    await api('PUT', '/v1/connections/service', { value: 'sk-live-wrong-value-000000' });
    const failed = await sync('calls', '{}');
    expect(failed.status).toBe(500);
    const first = await waitForFinal(fault, failed.headers.get('x-flowbox-run-id') ?? '');
    expect(first.status).toBe('FAILED');
    expect(first.error?.message).toContain('[connection:service]');
    expect(JSON.stringify(first)).not.toContain('sk-live-wrong-value');

    await api('PUT', '/v1/connections/service', { value: SECRET });
    const rerun = await api('POST', `/v1/runs/${first.id}/rerun`);
    expect(rerun.status).toBe(202);
    const { runId } = (await rerun.json()) as { runId: string };
    const second = await waitForFinal(fault, runId);
    expect(second.status, JSON.stringify(second.error)).toBe('SUCCEEDED');
    expect(service.tokens.at(-1)).toBe(SECRET);
  });

  it('fails a run whose connection was deleted since its version was published with CONNECTION_MISSING', async () => {
    await api('POST', '/v1/connections', { name: 'temporary', value: SECRET });
    const created = await api('POST', '/v1/flows', {
      id: 'uses-temporary',
      name: 'uses-temporary',
      definition: flowCalling(service.port, 'temporary'),
      publish: true,
    });
    expect(created.status).toBe(201);
    const ran = await sync('uses-temporary', '{}');
    expect(ran.status).toBe(200);
    const firstId = ran.headers.get('x-flowbox-run-id') ?? '';
    // A version without it published, the connection deleted: a re-run of v1 needs it.
    const v2 = await api('POST', '/v1/flows/uses-temporary/versions', {
      definition: flowCalling(service.port, 'service'),
      publish: true,
    });
    expect(v2.status).toBe(201);
    expect((await api('DELETE', '/v1/connections/temporary')).status).toBe(204);
    const rerun = await api('POST', `/v1/runs/${firstId}/rerun`);
    const { runId } = (await rerun.json()) as { runId: string };
    const run = await waitForFinal(fault, runId);
    expect(run.status).toBe('FAILED');
    expect(run.error).toMatchObject({
      code: 'CONNECTION_MISSING',
      message: expect.stringContaining('temporary'),
    });
  });

  it('runs a GitHub-signed sync webhook and answers 200; a bad signature 401', async () => {
    await api('POST', '/v1/connections', { name: 'github', value: GITHUB_SECRET });
    const definition = flowCalling(service.port, 'service') as unknown as {
      trigger: Record<string, unknown>;
    };
    definition.trigger = {
      ...definition.trigger,
      verify: {
        scheme: 'hmac-sha256',
        header: 'x-hub-signature-256',
        prefix: 'sha256=',
        secret: '{{connections.github}}',
      },
    };
    const created = await api('POST', '/v1/flows', {
      id: 'signed',
      name: 'signed',
      definition,
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const body = JSON.stringify({ action: 'opened' });
    const signature = `sha256=${createHmac('sha256', GITHUB_SECRET).update(body).digest('hex')}`;
    const good = await sync('signed', body, { 'x-hub-signature-256': signature });
    expect(good.status).toBe(200);
    const run = await waitForFinal(fault, good.headers.get('x-flowbox-run-id') ?? '');
    expect(JSON.stringify(run)).not.toContain(signature);
    const bad = await sync('signed', `${body} `, { 'x-hub-signature-256': signature });
    expect(bad.status).toBe(401);
    expect(bad.headers.get('x-flowbox-run-id')).toBeNull();
  });

  it('runs a Stripe-signed sync webhook and answers 200; a stale timestamp 401', async () => {
    const secret = 'whsec_stack_0123456789abcdef';
    await api('POST', '/v1/connections', { name: 'stripe', value: { signing: secret } });
    const definition = flowCalling(service.port, 'service') as unknown as {
      trigger: Record<string, unknown>;
    };
    definition.trigger = {
      ...definition.trigger,
      verify: { scheme: 'stripe', secret: '{{connections.stripe.signing}}' },
    };
    const created = await api('POST', '/v1/flows', {
      id: 'stripe',
      name: 'stripe',
      definition,
      publish: true,
    });
    expect(created.status, await created.clone().text()).toBe(201);
    const body = JSON.stringify({ type: 'invoice.paid' });
    const sign = (t: number) =>
      `t=${t},v1=${createHmac('sha256', secret).update(`${t}.${body}`).digest('hex')}`;
    const now = Math.floor(Date.now() / 1000);
    expect((await sync('stripe', body, { 'stripe-signature': sign(now) })).status).toBe(200);
    expect((await sync('stripe', body, { 'stripe-signature': sign(now - 600) })).status).toBe(401);
  });
});
