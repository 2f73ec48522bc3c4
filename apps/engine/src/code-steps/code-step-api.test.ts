import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as delay } from 'node:timers/promises';
import {
  CODE_STEP_FETCH_LIMITS,
  createEgressFetch,
  createFetchBudget,
  parseEgressPolicy,
} from '@flowbox/egress';
import { DEFAULT_FETCH_LIMITS, isFlowboxError, wrapCodeStep } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeRunnersByKind, type RunnerKind } from '../../test/support/code-runners.ts';
import { CONSOLE_MAX_BYTES, openCodeStepSession } from './code-step-host.ts';

/**
 * The code-step API (console, timers, fetch) in each execution mode, with the real egress
 * policy and a real HTTP server on 127.0.0.1. The policy names that server's port, so it is the
 * one loopback address a code step may reach; everything else on loopback is refused.
 */
const RUNNERS = codeRunnersByKind();

let server: Server;
let port: number;
/** Requests the server saw, by path. */
const seen: string[] = [];

beforeAll(async () => {
  server = createServer((request, response) => {
    seen.push(request.url ?? '');
    if (request.url === '/json') {
      let body = '';
      request.on('data', (chunk: Buffer) => {
        body += chunk.toString();
      });
      request.on('end', () => {
        response.setHeader('content-type', 'application/json');
        response.setHeader('x-echo-method', request.method ?? '');
        response.end(JSON.stringify({ got: body, auth: request.headers.authorization ?? null }));
      });
      return;
    }
    if (request.url === '/to-denied') {
      // 127.0.0.2 is loopback too, but not the named host: the redirect must be refused.
      response.writeHead(302, { location: `http://127.0.0.2:${port}/json` });
      response.end();
      return;
    }
    if (request.url === '/huge') {
      response.end('x'.repeat(CODE_STEP_FETCH_LIMITS.maxResponseBytes + 1));
      return;
    }
    response.statusCode = 404;
    response.end('no such page');
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  port = (server.address() as AddressInfo).port;
});

afterAll(async () => {
  for (const runner of Object.values(RUNNERS)) runner.close();
  server.close();
  await once(server, 'close');
});

describe.each(Object.keys(RUNNERS) as RunnerKind[])('code-step API, %s', (mode) => {
  const runner = RUNNERS[mode];

  /** Runs `code` as a code step; returns its value or its error, and what it printed. */
  async function step(code: string, timeoutMs = 2_000) {
    const policy = parseEgressPolicy(`public, 127.0.0.1:${port}`);
    const session = openCodeStepSession(
      createEgressFetch({
        policy,
        limits: CODE_STEP_FETCH_LIMITS,
        budget: createFetchBudget(DEFAULT_FETCH_LIMITS),
      }),
    );
    try {
      const value = await runner.run({
        source: wrapCodeStep(code),
        inputs: { port },
        timeoutMs,
        memoryMb: 32,
        host: session.host,
      });
      return { value, error: undefined, session };
    } catch (thrown) {
      const error = session.failureOf(thrown);
      if (!isFlowboxError(error)) throw error;
      return { value: undefined, error: { code: error.code, message: error.message }, session };
    } finally {
      session.close();
    }
  }

  describe('timers', () => {
    it('waits with setTimeout, passing its arguments', async () => {
      const code =
        'const t0 = Date.now(); const v = await new Promise((r) => setTimeout(r, 50, "late")); return [v, Date.now() - t0 >= 40];';
      expect((await step(code)).value).toEqual(['late', true]);
    });

    it('clears timeouts and repeats intervals until cleared', async () => {
      const code = `
        let fired = false;
        clearTimeout(setTimeout(() => { fired = true; }, 10));
        let ticks = 0;
        await new Promise((resolve) => { const id = setInterval(() => { ticks += 1; if (ticks === 3) { clearInterval(id); resolve(); } }, 5); });
        await new Promise((r) => setTimeout(r, 30));
        return { fired, ticks };`;
      expect((await step(code)).value).toEqual({ fired: false, ticks: 3 });
    });

    it('fails the step when a timer callback throws', async () => {
      const code = "setTimeout(() => { throw new Error('from a timer'); }, 5); await new Promise(() => {});";
      expect((await step(code)).error).toEqual({
        code: 'CODE_STEP_FAILED',
        message: 'from a timer (line 1, column 26)',
      });
    });

    it('stops a step whose timer outlasts its timeout, and a busy loop after a timer', async () => {
      expect((await step('await new Promise((r) => setTimeout(r, 5_000));', 200)).error?.code).toBe(
        'CODE_STEP_TIMEOUT',
      );
      expect(
        (await step('await new Promise((r) => setTimeout(r, 5)); while (true) {}', 200)).error?.code,
      ).toBe('CODE_STEP_TIMEOUT');
    });

    it('fires no timer once its step has ended', async () => {
      const { value, session } = await step("setTimeout(() => console.log('after the end'), 20); return 1;");
      expect(value).toBe(1);
      await delay(80);
      expect(session.lines()).toEqual([]);
    });
  });

  describe('console', () => {
    it('records each level as text in order', async () => {
      const code =
        "console.log('a', 1, { b: [2] }); console.info('i'); console.warn('w'); console.error(new TypeError('e')); console.debug(null, undefined); return 0;";
      const { session } = await step(code);
      const lines = session.lines();
      expect(lines.map((line) => line.level)).toEqual(['log', 'info', 'warn', 'error', 'debug']);
      expect(lines[0]?.message).toBe('a 1 {"b":[2]}');
      expect(lines[3]?.message).toMatch(/^TypeError: e/);
      expect(lines[4]?.message).toBe('null undefined');
    });

    it(`keeps ${CONSOLE_MAX_BYTES} bytes and says how much it dropped`, async () => {
      const code = "for (let i = 0; i < 100; i += 1) console.log('x'.repeat(1000)); return 0;";
      const lines = (await step(code)).session.lines();
      const kept = lines.slice(0, -1);
      expect(kept.reduce((sum, line) => sum + line.message.length, 0)).toBeLessThanOrEqual(CONSOLE_MAX_BYTES);
      expect(kept.length).toBe(32);
      expect(lines.at(-1)).toEqual({
        level: 'warn',
        message: '[68000 more bytes of console output dropped]',
      });
    });
  });

  describe('fetch under the egress policy', () => {
    it('calls an allowed server and reads its answer', async () => {
      const code = `
        const response = await fetch('http://127.0.0.1:' + inputs.port + '/json', {
          method: 'post', headers: { Authorization: 'Bearer t' }, body: JSON.stringify({ n: 1 }),
        });
        return { status: response.status, ok: response.ok, type: response.headers.get('Content-Type'), method: response.headers.get('x-echo-method'), body: await response.json() };`;
      expect((await step(code)).value).toEqual({
        status: 200,
        ok: true,
        type: 'application/json',
        method: 'POST',
        body: { got: '{"n":1}', auth: 'Bearer t' },
      });
    });

    it('answers a 404 as a response, not an error', async () => {
      const code =
        "const r = await fetch('http://127.0.0.1:' + inputs.port + '/nothing'); return [r.status, r.ok, await r.text()];";
      expect((await step(code)).value).toEqual([404, false, 'no such page']);
    });

    it.each([
      [
        'a loopback port the policy does not name',
        (p: number) => `http://127.0.0.1:${p + 1}/`,
        'EGRESS_DENIED',
      ],
      [
        'a redirect to a loopback address it does not name',
        (p: number) => `http://127.0.0.1:${p}/to-denied`,
        'EGRESS_DENIED',
      ],
      ['a name that resolves to loopback', (p: number) => `http://localhost:${p}/json`, 'EGRESS_DENIED'],
      ['the cloud metadata address', () => 'http://169.254.169.254/latest/meta-data/', 'EGRESS_DENIED'],
      ['a scheme other than http(s)', () => 'file:///etc/passwd', 'EGRESS_DENIED'],
      ['an oversized response', (p: number) => `http://127.0.0.1:${p}/huge`, 'CODE_STEP_FETCH_FAILED'],
    ])('refuses %s and fails the step with the reason', async (_name, url, code) => {
      const before = seen.length;
      const { error } = await step(`return await fetch(${JSON.stringify(url(port))});`);
      expect(error?.code).toBe(code);
      expect(error?.message.length).toBeGreaterThan(10);
      // A refused redirect's first hop was allowed; nothing after a refusal reached the server.
      expect(seen.slice(before).filter((path) => path !== '/to-denied' && path !== '/huge')).toEqual([]);
    });

    it('lets the code catch a refusal, with its code', async () => {
      const code =
        "try { await fetch('http://10.0.0.1/'); } catch (error) { return [error.name, error.code]; }";
      expect((await step(code)).value).toEqual(['TypeError', 'EGRESS_DENIED']);
    });
  });
});
