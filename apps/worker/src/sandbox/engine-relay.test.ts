import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request as httpRequest, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { CODE_STEP_FETCH_LIMITS, createEgressFetch, parseEgressPolicy } from '@flowbox/egress';
import { makeEngineJob } from '@flowbox/engine/testing';
import { RELAY_ORIGIN, RELAY_PATHS } from '@flowbox/protocol';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { silentLogger } from '../test-helpers.ts';
import { type EngineRelay, startEngineRelay } from './engine-relay.ts';

const MAX_IN_FLIGHT = 3;

/**
 * The relay as a hostile piece meets it, posting to the socket itself: its fetches are held to
 * the run's budget whatever the engine's side did, and end when the poster goes away.
 */
describe('the engine relay holds code steps’ fetch to the run’s budget', () => {
  let dir: string;
  let relay: EngineRelay;
  let server: Server;
  let port: number;
  const state = { active: 0, maxActive: 0, requests: 0 };

  beforeEach(async () => {
    Object.assign(state, { active: 0, maxActive: 0, requests: 0 });
    // Answers that start and never end: each request stays in flight until someone closes it.
    server = createServer((_request, response) => {
      state.requests += 1;
      state.active += 1;
      state.maxActive = Math.max(state.maxActive, state.active);
      response.on('close', () => {
        state.active -= 1;
      });
      response.writeHead(200, { 'content-length': '1000' });
      response.write('x'.repeat(100));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    dir = await mkdtemp(path.join(tmpdir(), 'flowbox-relay-test-'));
    relay = await startEngineRelay({
      socketDir: path.join(dir, 'relay'),
      egressFetch: (policy, budget) => createEgressFetch({ policy, limits: CODE_STEP_FETCH_LIMITS, budget }),
      logger: silentLogger(),
    });
    relay.admit(
      makeEngineJob('http://127.0.0.1:9', 'http://127.0.0.1:9/log', {
        bundlePath: '/nowhere.json',
        pieces: [],
        egress: parseEgressPolicy(`127.0.0.1:${port}`),
        fetchLimits: { maxInFlight: MAX_IN_FLIGHT, maxBufferedBytes: 1024 * 1024 },
      }),
    );
  });

  afterEach(async () => {
    await relay.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  /** A fetch posted straight to the socket; `destroy` leaves, as an engine whose step ended would. */
  function post(body: string) {
    const request = httpRequest(`${RELAY_ORIGIN}${RELAY_PATHS.fetch}`, {
      method: 'POST',
      socketPath: path.join(relay.socketDir, 'relay.sock'),
      headers: { 'content-type': 'application/json' },
    });
    const answered = new Promise<string>((resolve, reject) => {
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => resolve(text));
      });
      request.on('error', reject);
    });
    answered.catch(() => {});
    request.end(body);
    return { request, answered };
  }

  const fetchBody = () => JSON.stringify({ url: `http://127.0.0.1:${port}/`, method: 'GET', headers: {} });

  it('lets at most maxInFlight through at once, and ends them when the poster goes away', async () => {
    const posts = Array.from({ length: 10 }, () => post(fetchBody()));
    await expect.poll(() => state.requests).toBe(MAX_IN_FLIGHT);
    expect(state.maxActive).toBe(MAX_IN_FLIGHT);
    // The poster leaves: the outgoing requests end, and the waiting ones take the slots in turn.
    for (const { request } of posts.slice(0, MAX_IN_FLIGHT)) request.destroy();
    await expect.poll(() => state.requests).toBe(2 * MAX_IN_FLIGHT);
    expect(state.maxActive).toBe(MAX_IN_FLIGHT);
    for (const { request } of posts) request.destroy();
    await expect.poll(() => state.active).toBe(0);
  });

  it('refuses a request body that would take the run past its bytes, without sending it', async () => {
    const big = JSON.stringify({
      url: `http://127.0.0.1:${port}/`,
      method: 'POST',
      headers: {},
      body: 'y'.repeat(2 * 1024 * 1024),
    });
    const answer = JSON.parse(await post(big).answered) as { error?: { code: string } };
    expect(answer.error?.code).toBe('CODE_STEP_FETCH_LIMIT');
    expect(state.requests).toBe(0);
  });

  it('ends everything in flight when the run is released', async () => {
    const posts = Array.from({ length: 2 }, () => post(fetchBody()));
    await expect.poll(() => state.active).toBe(2);
    relay.release();
    await expect.poll(() => state.active).toBe(0);
    for (const { request } of posts) request.destroy();
  });
});

/**
 * A run's log upload follows its result, while the next run may already be admitted: each goes
 * to its own run's form, through a path only that run's job was given, until its upload ended.
 */
describe('the engine relay passes each run’s log upload to that run’s form', () => {
  let dir: string;
  let relay: EngineRelay;
  let server: Server;
  let port: number;
  const received: string[] = [];

  beforeEach(async () => {
    received.length = 0;
    server = createServer((request, response) => {
      received.push(request.url ?? '');
      request.resume();
      request.on('end', () => response.writeHead(204).end());
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    dir = await mkdtemp(path.join(tmpdir(), 'flowbox-relay-test-'));
    relay = await startEngineRelay({
      socketDir: path.join(dir, 'relay'),
      egressFetch: (policy, budget) => createEgressFetch({ policy, limits: CODE_STEP_FETCH_LIMITS, budget }),
      logger: silentLogger(),
    });
  });

  afterEach(async () => {
    await relay.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  const admit = (runId: string) =>
    relay.admit({
      ...makeEngineJob('http://127.0.0.1:9', `http://127.0.0.1:${port}/form-${runId}`, {
        bundlePath: '/nowhere.json',
        pieces: [],
      }),
      runId,
    });

  /** POSTs a log to the relay path `url` names; resolves with the status answered. */
  function upload(url: string): Promise<number> {
    const { pathname } = new URL(url);
    return new Promise((resolve, reject) => {
      const request = httpRequest(`${RELAY_ORIGIN}${pathname}`, {
        method: 'POST',
        socketPath: path.join(relay.socketDir, 'relay.sock'),
        headers: { 'content-type': 'multipart/form-data; boundary=x' },
      });
      request.on('response', (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode ?? 0));
      });
      request.on('error', reject);
      request.end('--x--\r\n');
    });
  }

  it('forwards a released run’s upload after the next run is admitted, and refuses it once ended', async () => {
    const first = admit('run-a');
    relay.release();
    const second = admit('run-b');
    expect(first.logUpload.url).not.toBe(second.logUpload.url);
    expect(await upload(first.logUpload.url)).toBe(204);
    expect(await upload(second.logUpload.url)).toBe(204);
    expect(received).toEqual(['/form-run-a', '/form-run-b']);

    relay.endUpload('run-a');
    expect(await upload(first.logUpload.url)).toBe(403);
    // No path without a run's token reaches a form.
    expect(await upload(`${RELAY_ORIGIN}${RELAY_PATHS.logUpload}`)).toBe(403);
    expect(await upload(`${RELAY_ORIGIN}${RELAY_PATHS.logUpload}/run-b`)).toBe(403);
    expect(received).toHaveLength(2);
  });
});

/** A resumed run's engine reads and writes its checkpoint through the relay, as it uploads its log. */
describe('the engine relay passes a run’s checkpoint on', () => {
  let dir: string;
  let relay: EngineRelay;
  let server: Server;
  let port: number;
  const seen: Array<{ method: string; url: string; body: string }> = [];

  beforeEach(async () => {
    seen.length = 0;
    server = createServer((request, response) => {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        seen.push({ method: request.method ?? '', url: request.url ?? '', body });
        response.writeHead(request.method === 'GET' ? 200 : 204, { 'content-type': 'application/json' });
        response.end(request.method === 'GET' ? '{"version":1}' : undefined);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as { port: number }).port;
    dir = await mkdtemp(path.join(tmpdir(), 'flowbox-relay-test-'));
    relay = await startEngineRelay({
      socketDir: path.join(dir, 'relay'),
      egressFetch: (policy, budget) => createEgressFetch({ policy, limits: CODE_STEP_FETCH_LIMITS, budget }),
      logger: silentLogger(),
    });
  });

  afterEach(async () => {
    await relay.close();
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await rm(dir, { recursive: true, force: true });
  });

  function call(
    method: 'GET' | 'POST',
    url: string,
    body?: string,
  ): Promise<{ status: number; text: string }> {
    return new Promise((resolve, reject) => {
      const request = httpRequest(url, {
        method,
        socketPath: path.join(relay.socketDir, 'relay.sock'),
        headers: body === undefined ? {} : { 'content-type': 'application/json' },
      });
      request.on('response', (response) => {
        let text = '';
        response.on('data', (chunk: Buffer) => {
          text += chunk.toString();
        });
        response.on('end', () => resolve({ status: response.statusCode ?? 0, text }));
      });
      request.on('error', reject);
      request.end(body);
    });
  }

  const job = (withCheckpoint: boolean) => {
    const base = makeEngineJob('http://127.0.0.1:9', `http://127.0.0.1:${port}/log`, {
      bundlePath: '/nowhere.json',
      pieces: [],
    });
    if (!withCheckpoint) return base;
    return {
      ...base,
      checkpointUpload: {
        url: `http://127.0.0.1:${port}/upload`,
        fields: {},
        key: 'checkpoints/r/1.json',
        maxBytes: 1_000,
      },
      resume: {
        checkpoint: {
          url: `http://127.0.0.1:${port}/checkpoints/r/0.json?sig=1`,
          key: 'checkpoints/r/0.json',
        },
        values: {},
        resumedAt: new Date(0).toISOString(),
        lateMs: 0,
      },
    };
  };

  it('names itself in the job, and forwards the GET and the upload to the presigned URLs', async () => {
    const seenJob = relay.admit(job(true));
    expect(seenJob.resume?.checkpoint.url).toBe(`${RELAY_ORIGIN}${RELAY_PATHS.checkpoint}`);
    expect(seenJob.checkpointUpload?.url).toBe(`${RELAY_ORIGIN}${RELAY_PATHS.checkpointUpload}`);
    expect(await call('GET', `${RELAY_ORIGIN}${RELAY_PATHS.checkpoint}`)).toEqual({
      status: 200,
      text: '{"version":1}',
    });
    expect((await call('POST', `${RELAY_ORIGIN}${RELAY_PATHS.checkpointUpload}`, '{"a":1}')).status).toBe(
      204,
    );
    expect(seen).toEqual([
      { method: 'GET', url: '/checkpoints/r/0.json?sig=1', body: '' },
      { method: 'POST', url: '/upload', body: '{"a":1}' },
    ]);
  });

  it('refuses both for a job that cannot pause, and between runs', async () => {
    relay.admit(job(false));
    expect((await call('GET', `${RELAY_ORIGIN}${RELAY_PATHS.checkpoint}`)).status).toBe(403);
    expect((await call('POST', `${RELAY_ORIGIN}${RELAY_PATHS.checkpointUpload}`, '{}')).status).toBe(403);
    relay.admit(job(true));
    relay.release();
    expect((await call('GET', `${RELAY_ORIGIN}${RELAY_PATHS.checkpoint}`)).status).toBe(403);
    expect(seen).toEqual([]);
  });
});
