// Fault-injection row "webhook abuse": a 2 MiB body, a wrong content type, a slow
// client, a 500 req/s burst on one flow. Must hold: 413 / cut within a bound / 503 past
// WEBHOOK_MAX_QUEUED_RUNS with retry-after, none hangs, and Redis memory bounded. Against a
// real app process with no worker, the worst case: nothing drains the queue. Also a
// body nested 10,000 deep (400 before any run), `__proto__` bodies (400 saying so), a traversal
// under /inspector/ (404, no error log), nosniff on every answer and /metrics behind its token.
import { mkdtemp, rm } from 'node:fs/promises';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../../test/fixtures.ts';
import { promSample } from '../../../../test/prometheus.ts';
import { RUN_ID_HEADER } from '../../../app/src/http/webhook-routes.ts';
import { manage, postJson } from '../../../app/test/app-harness.ts';
import { type RunningStack, startStack } from '../../src/stack.ts';
import { RedisWire } from './redis-wire.ts';

const MiB = 1024 * 1024;
const REQUEST_TIMEOUT_S = 2;
const WEBHOOK_TIMEOUT_S = 4;
const MAX_QUEUED = 200;
const METRICS_TOKEN = 'metrics-token-for-the-abuse-test';
/** Node checks request timeouts once a second (server-timeouts.ts); this much more is slack. */
const CUT_DEADLINE_MS = (REQUEST_TIMEOUT_S + 1 + 2) * 1000;

interface SlowClientOutcome {
  /** From the first byte sent to the server closing the connection; null if it never did. */
  closedAfterMs: number | null;
  statusLine: string;
}

/**
 * Sends `head` at once, then one byte of `drip` a second, until the server closes the
 * connection or `deadlineMs` passes (then the client gives up and the outcome says so).
 */
function slowClient(
  baseUrl: string,
  head: string,
  drip: string,
  deadlineMs: number,
): Promise<SlowClientOutcome> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    let sent = 0;
    let started = 0;
    let drips: NodeJS.Timeout | undefined;
    const finish = (closed: boolean) => {
      clearInterval(drips);
      clearTimeout(giveUp);
      socket.destroy();
      resolve({
        closedAfterMs: closed ? performance.now() - started : null,
        statusLine: received.split('\r\n')[0] ?? '',
      });
    };
    const giveUp = setTimeout(() => finish(false), deadlineMs);
    socket.on('data', (chunk) => {
      received += chunk.toString('latin1');
    });
    socket.on('close', () => finish(true));
    socket.on('error', () => {});
    socket.on('connect', () => {
      started = performance.now();
      socket.write(head);
      drips = setInterval(() => {
        if (!socket.destroyed) socket.write(drip[sent++ % drip.length] ?? ' ');
      }, 1_000);
    });
  });
}

interface RawAnswer {
  statusLine: string;
  body: string;
}

/**
 * POSTs on a raw socket: the headers, then `sendBytes` of a body that claims `declaredBytes`
 * (chunked when null), then waits for the answer without sending the rest, as a client that
 * honours an early answer does. A server that refuses a body closes the connection with what is
 * left unread, and the kernel then resets it, dropping an answer not yet sent; fetch, which
 * writes the whole body first, often fails with EPIPE instead of showing the answer.
 */
function rawPost(
  baseUrl: string,
  path: string,
  declaredBytes: number | null,
  sendBytes: number,
  contentType = 'application/json',
): Promise<RawAnswer> {
  const { hostname, port } = new URL(baseUrl);
  const framing = declaredBytes === null ? 'Transfer-Encoding: chunked' : `Content-Length: ${declaredBytes}`;
  const head = `POST ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: ${contentType}\r\n${framing}\r\n\r\n`;
  return new Promise((resolve, reject) => {
    const socket = connect({ host: hostname, port: Number(port) });
    let received = '';
    socket.on('data', (chunk) => {
      received += chunk.toString('utf8');
    });
    socket.on('error', () => {});
    socket.on('close', () => {
      const [answerHead = '', ...rest] = received.split('\r\n\r\n');
      if (answerHead === '') reject(new Error('the connection closed without an answer'));
      else resolve({ statusLine: answerHead.split('\r\n')[0] ?? '', body: rest.join('\r\n\r\n') });
    });
    socket.on('connect', () => {
      socket.write(head);
      const body = Buffer.alloc(sendBytes, 0x20);
      for (let at = 0; at < body.length; at += 64 * 1024) {
        const slice = body.subarray(at, at + 64 * 1024);
        socket.write(declaredBytes === null ? `${slice.length.toString(16)}\r\n${slice}\r\n` : slice);
      }
    });
  });
}

interface BurstResult {
  sent: number;
  seconds: number;
  statuses: Map<number, number>;
  refusals: Array<{ retryAfter: string | null; runId: string | null; body: unknown }>;
  maxLatencyMs: number;
}

/**
 * `rate` requests a second for `seconds`, each with its own deadline; waits for every answer.
 * Paced on the clock, not on ticks: when the event loop lags, the next tick catches up.
 */
async function burst(
  url: string,
  rate: number,
  seconds: number,
  perRequestDeadlineMs: number,
): Promise<BurstResult> {
  const statuses = new Map<number, number>();
  const refusals: BurstResult['refusals'] = [];
  const pending: Array<Promise<void>> = [];
  let maxLatencyMs = 0;
  const one = async (n: number) => {
    const sentAt = performance.now();
    // A request past its deadline is aborted, and fails the burst: none may hang.
    const response = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ n }),
      signal: AbortSignal.timeout(perRequestDeadlineMs),
    }).then(undefined, (error: unknown) => {
      throw new Error(`request ${n} got no answer: ${String(error)}`);
    });
    const body: unknown = await response.json();
    maxLatencyMs = Math.max(maxLatencyMs, performance.now() - sentAt);
    statuses.set(response.status, (statuses.get(response.status) ?? 0) + 1);
    if (response.status === 503) {
      refusals.push({
        retryAfter: response.headers.get('retry-after'),
        runId: response.headers.get(RUN_ID_HEADER),
        body,
      });
    }
  };
  const total = Math.round(rate * seconds);
  const started = performance.now();
  let sent = 0;
  await new Promise<void>((resolve) => {
    const timer = setInterval(() => {
      const due = Math.min(total, Math.floor(((performance.now() - started) / 1000) * rate));
      while (sent < due) pending.push(one(sent++));
      if (sent >= total) {
        clearInterval(timer);
        resolve();
      }
    }, 5);
  });
  const sendSeconds = (performance.now() - started) / 1000;
  await Promise.all(pending);
  return { sent, seconds: sendSeconds, statuses, refusals, maxLatencyMs };
}

describe('webhook abuse against a real app process (no worker)', () => {
  let stack: RunningStack;
  let url: string;
  let dataDir: string;
  let redis: RedisWire;
  const prefix = testNamespace();
  /** The app's log lines at level error and above. */
  const errorLines: string[] = [];

  const countRuns = async (): Promise<number> => {
    const response = await manage(
      url,
      'GET',
      '/v1/runs?flowId=benchmark&limit=10000',
      undefined,
      stack.apiKey,
    );
    expect(response.status).toBe(200);
    return ((await response.json()) as { runs: unknown[] }).runs.length;
  };
  // A waiting job is in BullMQ's wait list (its run is first in its flow) or its prioritized
  // set (a later rank is its priority): run-queue.ts.
  const waiting = async (): Promise<number> =>
    Number(await redis.command('LLEN', `${prefix}:runs:wait`)) +
    Number(await redis.command('ZCARD', `${prefix}:runs:prioritized`));

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-fault-webhook-'));
    redis = await RedisWire.open(inject('redisUrl'));
    stack = await startStack({
      dataDir,
      apps: 1,
      workers: 0,
      port: 0,
      logLevel: 'error',
      databaseUrl: await createTestDatabase(),
      redisUrl: inject('redisUrl'),
      s3: { ...inject('s3'), bucket: await createTestBucket() },
      appEnv: {
        REDIS_PREFIX: prefix,
        WEBHOOK_TIMEOUT_SECONDS: String(WEBHOOK_TIMEOUT_S),
        HTTP_REQUEST_TIMEOUT_SECONDS: String(REQUEST_TIMEOUT_S),
        WEBHOOK_MAX_QUEUED_RUNS: String(MAX_QUEUED),
        METRICS_TOKEN,
      },
      onLine: (_name, line) => {
        if (Number(line.json?.level ?? 0) >= 50) errorLines.push(line.raw);
      },
      baseEnv: process.env,
    });
    url = stack.appUrls[0] ?? '';
  });
  afterAll(async () => {
    await stack?.close();
    await redis?.close();
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('answers 413 to a 2 MiB body, sized or chunked, whatever its content type, creating no run', async () => {
    // Every content type is taken (no 415), and all within the one limit.
    for (const type of [
      'application/json',
      'text/plain',
      'application/x-www-form-urlencoded',
      'multipart/form-data; boundary=x',
      'application/octet-stream',
    ]) {
      // Sized: refused on its content-length alone, before any of the body is read.
      const sized = await rawPost(url, '/v1/webhooks/benchmark/sync', 2 * MiB, 0, type);
      // Chunked: no length to refuse on; refused once the bytes that came pass the limit.
      const chunked = await rawPost(url, '/v1/webhooks/benchmark/sync', null, MiB + 64 * 1024, type);
      for (const [name, answer] of Object.entries({ sized, chunked })) {
        expect(answer.statusLine, `${type} ${name}`).toBe('HTTP/1.1 413 Payload Too Large');
        expect(answer.body, `${type} ${name}`).toContain('BODY_TOO_LARGE');
      }
    }
    expect(await countRuns()).toBe(0);
  });

  it('cuts a client that sends its body a byte a second with 408, within the request timeout', async () => {
    const head =
      'POST /v1/webhooks/benchmark HTTP/1.1\r\nHost: 127.0.0.1\r\n' +
      'Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n{"a":"';
    const outcome = await slowClient(url, head, 'xxxxxxxxxx', CUT_DEADLINE_MS + 5_000);
    console.info(`slow body: closed after ${outcome.closedAfterMs?.toFixed(0)} ms, "${outcome.statusLine}"`);
    expect(outcome.closedAfterMs, 'the app never closed the connection').not.toBeNull();
    expect(outcome.closedAfterMs).toBeLessThan(CUT_DEADLINE_MS);
    expect(outcome.statusLine).toBe('HTTP/1.1 408 Request Timeout');
    expect(await countRuns()).toBe(0);
  });

  it('cuts a client that never finishes its headers, within the request timeout', async () => {
    const outcome = await slowClient(
      url,
      'POST /v1/webhooks/benchmark HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ',
      'abcdefghij',
      CUT_DEADLINE_MS + 5_000,
    );
    console.info(
      `slow headers: closed after ${outcome.closedAfterMs?.toFixed(0)} ms, "${outcome.statusLine}"`,
    );
    expect(outcome.closedAfterMs, 'the app never closed the connection').not.toBeNull();
    expect(outcome.closedAfterMs).toBeLessThan(CUT_DEADLINE_MS);
    expect(outcome.statusLine).toBe('HTTP/1.1 408 Request Timeout');
  });

  it('still lets a sync webhook wait for its flow longer than the request timeout (504 at the webhook timeout, not 408)', async () => {
    const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, { slow: false });
    expect(response.status).toBe(504);
    expect(await response.json()).toMatchObject({ error: { code: 'WEBHOOK_TIMEOUT' } });
    expect(response.headers.get(RUN_ID_HEADER)).not.toBeNull();
  });

  it('refuses a body nested 10,000 deep (20 KB) with 400 before any run, and takes one 64 deep', async () => {
    errorLines.splice(0);
    const runsBefore = await countRuns();
    const nested = (depth: number) => `${'{"a":'.repeat(depth - 1)}{}${'}'.repeat(depth - 1)}`;
    const deep = nested(10_000);
    expect(deep.length).toBeLessThan(60 * 1024);
    for (const path of ['/v1/webhooks/benchmark/sync', '/v1/webhooks/benchmark']) {
      const response = await postJson(`${url}${path}`, deep);
      expect(response.status, path).toBe(400);
      expect(response.headers.get(RUN_ID_HEADER)).toBeNull();
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INVALID_BODY');
      expect(body.error.message).toMatch(/nests deeper than 64 levels .*WEBHOOK_MAX_DEPTH/);
    }
    // Past the limit by one: refused; at it: a run like any other.
    expect((await postJson(`${url}/v1/webhooks/benchmark`, nested(65))).status).toBe(400);
    expect(await countRuns()).toBe(runsBefore);
    expect((await postJson(`${url}/v1/webhooks/benchmark`, nested(64))).status).toBe(202);
    expect(await countRuns()).toBe(runsBefore + 1);
    expect(errorLines).toEqual([]);
  });

  it('refuses __proto__ and constructor.prototype bodies with 400 saying what was refused', async () => {
    const runsBefore = await countRuns();
    const cases = {
      '{"__proto__":{"isAdmin":true}}': /"__proto__" key \(body\.__proto__\).*refused/,
      '{"user":{"__proto__":{"isAdmin":true}}}': /"__proto__" key \(body\.user\.__proto__\)/,
      '{"constructor":{"prototype":{"isAdmin":true}}}':
        /"constructor" key holding "prototype" \(body\.constructor\)/,
    };
    for (const [raw, message] of Object.entries(cases)) {
      const response = await postJson(`${url}/v1/webhooks/benchmark/sync`, raw);
      expect(response.status, raw).toBe(400);
      const body = (await response.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INVALID_BODY');
      expect(body.error.message).toMatch(message);
      expect(body.error.message).not.toMatch(/not valid JSON/);
    }
    const broken = await postJson(`${url}/v1/webhooks/benchmark/sync`, '{"a": ');
    expect(((await broken.json()) as { error: { message: string } }).error.message).toMatch(
      /^the body is not valid JSON: /,
    );
    expect(await countRuns()).toBe(runsBefore);
  });

  it('answers a path that climbs out of /inspector/ 404, logging no error', async () => {
    errorLines.splice(0);
    for (const path of [
      '/inspector/..%2f..%2f.data%2fapi-key',
      '/inspector/..%2fpackage.json',
      '/inspector/..%5c..%5cpackage.json',
      '/inspector/.hidden',
    ]) {
      const response = await fetch(`${url}${path}`);
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'ROUTE_NOT_FOUND' } });
    }
    expect((await fetch(`${url}/inspector/`)).status).toBe(200);
    expect(errorLines).toEqual([]);
  });

  it('serves every webhook answer with nosniff', async () => {
    for (const response of [
      await postJson(`${url}/v1/webhooks/benchmark`, {}),
      await postJson(`${url}/v1/webhooks/no-such-flow/sync`, {}),
      await postJson(`${url}/v1/webhooks/benchmark/sync`, '{'),
    ]) {
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      // JSON answers: a browser renders none of it, so no sandbox is needed.
      expect(response.headers.get('content-type')).toMatch(/^application\/json/);
      expect(response.headers.get('content-security-policy')).toBeNull();
    }
  });

  it('serves /metrics only with METRICS_TOKEN, and names no flow in it', async () => {
    expect((await fetch(`${url}/metrics`)).status).toBe(401);
    const wrong = await fetch(`${url}/metrics`, { headers: { authorization: 'Bearer not-the-token' } });
    expect(wrong.status).toBe(401);
    const response = await fetch(`${url}/metrics`, { headers: { authorization: `Bearer ${METRICS_TOKEN}` } });
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(promSample(text, 'flowbox_runs_accepted_total')).toBeGreaterThanOrEqual(1);
    expect(text).not.toContain('benchmark');
    expect(text).not.toMatch(/\{[^}]*flow=/);
  });

  it(`a 500 req/s burst on one flow: 202 up to ${MAX_QUEUED} waiting runs, then 503 with retry-after; none hangs; Redis stays bounded`, async () => {
    const waitingBefore = await waiting();
    const runsBefore = await countRuns();
    const memoryBefore = await redis.usedMemory();

    const first = await burst(`${url}/v1/webhooks/benchmark`, 500, 2, 15_000);
    const accepted = first.statuses.get(202) ?? 0;
    const refused = first.statuses.get(503) ?? 0;
    const keysAfterFirst = await redis.keysMemory(`${prefix}:*`);
    const namespaceBytes = [...keysAfterFirst.values()].reduce((a, b) => a + b, 0);
    const memoryAfterFirst = await redis.usedMemory();
    console.info(
      `burst 1: ${first.sent} requests in ${first.seconds.toFixed(2)} s (${(first.sent / first.seconds).toFixed(0)}/s): ` +
        `${accepted} × 202, ${refused} × 503, slowest ${first.maxLatencyMs.toFixed(0)} ms; ` +
        `redis used_memory ${memoryBefore} → ${memoryAfterFirst}, namespace ${namespaceBytes} B in ${keysAfterFirst.size} keys`,
    );
    expect(first.sent).toBeGreaterThan(MAX_QUEUED * 2);
    expect([...first.statuses.keys()].sort()).toEqual([202, 503]);
    // One app, nothing draining: the bound is exact.
    expect(accepted).toBe(MAX_QUEUED - waitingBefore);
    expect(await waiting()).toBe(MAX_QUEUED);
    expect(await countRuns()).toBe(runsBefore + accepted);
    for (const refusal of first.refusals) {
      expect(refusal.retryAfter).toBe('1');
      expect(refusal.runId).toBeNull();
      expect(refusal.body).toMatchObject({ error: { code: 'QUEUE_FULL', message: /queue is full/ } });
    }

    // A second burst, sync this time, on the full queue: every caller is answered at once
    // (none waits for the webhook timeout), and Redis does not grow by a byte.
    const second = await burst(`${url}/v1/webhooks/benchmark/sync`, 500, 1, 15_000);
    const keysAfterSecond = await redis.keysMemory(`${prefix}:*`);
    const memoryAfterSecond = await redis.usedMemory();
    console.info(
      `burst 2 (sync, queue full): ${second.sent} requests, ${second.statuses.get(503) ?? 0} × 503, ` +
        `slowest ${second.maxLatencyMs.toFixed(0)} ms; redis used_memory ${memoryAfterSecond}`,
    );
    expect([...second.statuses.entries()]).toEqual([[503, second.sent]]);
    // BullMQ's stalled-jobs check sets and expires a marker key on its own schedule: not backlog.
    const backlog = (keys: Map<string, number>) =>
      [...keys].filter(([key]) => !key.endsWith(':stalled-check'));
    expect(backlog(keysAfterSecond)).toEqual(backlog(keysAfterFirst));
    expect(await countRuns()).toBe(runsBefore + accepted);

    const health = await fetch(`${url}/health/ready`);
    expect(health.status).toBe(200);
  });
});
