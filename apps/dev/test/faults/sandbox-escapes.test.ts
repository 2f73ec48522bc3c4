// Fault-injection row "sandbox escape attempts": constructor-chain escapes, reaching
// `process`, `require`, `import()`, timers abuse, network to 127.0.0.1 (refused by the default
// egress policy), prototype pollution and
// another run's inputs. Must hold: every attempt fails inside the isolate (the run FAILED with a
// clear error, or the code sees nothing) and nothing reaches the engine: no file written, no
// connection made, no output, the same engine process serves the next run.
//
// Each attempt is a flow whose code step runs in real app, worker and engine processes
// (EXECUTION_MODE=SANDBOX_CODE_ONLY, warm engine). Had one reached `process`, it would write a
// marker file, connect to a listener this test opens, and print a marker; all three are checked.
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, connect as netConnect, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LogLine } from '@flowbox/local-services';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../../test/fixtures.ts';
import { getRun, manage, postJson, type RunView } from '../../../app/test/app-harness.ts';
import { type RunningStack, startStack } from '../../src/stack.ts';

const CODE_STEP_TIMEOUT_MS = 1_000;
const FINAL = ['SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR'];
const ESCAPED = 'FLOWBOX-SANDBOX-ESCAPED';

interface Attempt {
  name: string;
  /** The body of the code step; `hit(p, how)` is in scope (see `payload`). */
  code: string;
  /** The code step's error, matched on its message. */
  fails: RegExp;
  /** The error's code, when not CODE_STEP_FAILED (a refusal of the egress policy). */
  errorCode?: string;
}

// The same attempts with RUN_ISOLATION=isolate: the code step runs in its run's own
// isolate, beside the run's pieces, and ends as it does in a shared engine.
describe.each<{ name: string; env: Record<string, string> }>([
  { name: 'shared', env: { REUSE_SANDBOX: 'true' } },
  { name: 'isolate', env: { RUN_ISOLATION: 'isolate' } },
])(
  'sandbox escape attempts through real app, worker and engine processes (RUN_ISOLATION=$name)',
  (isolation) => {
    let stack: RunningStack;
    let url: string;
    let dataDir: string;
    let listener: Server;
    let listenerPort: number;
    let marker: string;
    let connections = 0;
    const lines: string[] = [];

    /** Runs the attempt's consequences, should `p` be the engine's `process`. */
    const payload = () => `const hit = (p, how) => {
  if (!p) throw new Error('no process via ' + how);
  p.getBuiltinModule('node:fs').writeFileSync(${JSON.stringify(marker)}, how);
  p.getBuiltinModule('node:net').connect(${listenerPort}, '127.0.0.1');
  p.stdout.write(${JSON.stringify(ESCAPED)} + ' ' + how + '\\n');
  return ${JSON.stringify(ESCAPED)};
};
`;

    async function addFlow(id: string, code: string, input: Record<string, string> = {}): Promise<void> {
      const definition: FlowDefinition = {
        trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
        steps: [{ type: 'code', name: 'step_1', code, input }],
      };
      const created = await manage(
        url,
        'POST',
        '/v1/flows',
        { id, name: id, definition, publish: true },
        stack.apiKey,
      );
      expect(created.status, `create flow ${id}: ${await created.clone().text()}`).toBe(201);
    }

    /** Triggers a flow and waits for its run's record (final, with the worker's provisioning). */
    async function run(flowId: string, body: Record<string, unknown> = {}): Promise<RunView> {
      const accepted = await postJson(`${url}/v1/webhooks/${flowId}`, body);
      expect(accepted.status).toBe(202);
      const { runId } = (await accepted.json()) as { runId: string };
      const deadline = Date.now() + 20_000;
      for (;;) {
        const view = await getRun(url, runId, stack.apiKey);
        if (FINAL.includes(view.status) && view.provisioning !== null) return view;
        if (Date.now() > deadline) throw new Error(`run ${runId} of ${flowId} still ${view.status}`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }

    const enginePid = (view: RunView) => (view.provisioning?.engine as { pid?: number } | undefined)?.pid;

    beforeAll(async () => {
      dataDir = await mkdtemp(join(tmpdir(), 'flowbox-fault-sandbox-'));
      marker = join(dataDir, 'escaped.txt');
      listener = createServer((socket) => {
        connections += 1;
        socket.destroy();
      });
      await new Promise<void>((resolve) => listener.listen(0, '127.0.0.1', resolve));
      listenerPort = (listener.address() as { port: number }).port;
      stack = await startStack({
        dataDir,
        apps: 1,
        workers: 1,
        port: 0,
        logLevel: 'info',
        databaseUrl: await createTestDatabase(),
        redisUrl: inject('redisUrl'),
        s3: { ...inject('s3'), bucket: await createTestBucket() },
        appEnv: {
          REDIS_PREFIX: testNamespace(),
          WORKER_POLL_SECONDS: '2',
          CODE_STEP_TIMEOUT_MS: String(CODE_STEP_TIMEOUT_MS),
        },
        workerEnv: { EXECUTION_MODE: 'SANDBOX_CODE_ONLY', ...isolation.env },
        onLine: (_name: string, line: LogLine) => {
          lines.push(line.raw);
        },
        baseEnv: process.env,
      });
      url = stack.appUrls[0] ?? '';
    });
    afterAll(async () => {
      await stack?.close();
      await new Promise<void>((resolve) => (listener ? listener.close(() => resolve()) : resolve()));
      if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
    });

    const attempts = (): Attempt[] => [
      {
        name: 'this.constructor.constructor',
        code: "return hit(this.constructor.constructor('return process')(), 'this.constructor');",
        fails: /process is not defined/,
      },
      {
        name: '({}).constructor.constructor',
        code: "return hit(({}).constructor.constructor('return process')(), 'object constructor');",
        fails: /process is not defined/,
      },
      {
        name: 'async function constructor',
        code: "return hit(await (async () => {}).constructor('return process')(), 'async constructor');",
        fails: /process is not defined/,
      },
      {
        name: "Function('return this')()",
        code: "return hit(Function('return this')().process, 'Function(return this)');",
        fails: /no process via Function\(return this\)/,
      },
      { name: 'process', code: "return hit(process, 'process');", fails: /process is not defined/ },
      {
        name: 'globalThis.process',
        code: "return hit(globalThis.process, 'globalThis');",
        fails: /no process via globalThis/,
      },
      {
        name: 'require',
        code: "return hit(require('node:process'), 'require');",
        fails: /require is not defined/,
      },
      {
        name: 'module.constructor._load',
        code: "return hit(module.constructor._load('node:process'), 'module');",
        fails: /module is not defined/,
      },
      {
        name: "import('node:fs')",
        code: "const fs = await import('node:fs'); fs.writeFileSync(MARKER_PATH, 'import'); return 'x';",
        fails: /not supported/i,
      },
      {
        name: 'stack frames (Error.prepareStackTrace)',
        code: `Error.prepareStackTrace = (_error, frames) => frames;
const frames = new Error('walk').stack;
for (const frame of frames) {
  const fn = frame.getFunction && frame.getFunction();
  // A frame's function may be async: its constructor makes async functions, whose result is a promise.
  if (fn) hit(await fn.constructor('return globalThis.process')(), 'stack frame');
}
throw new Error('no process in ' + frames.length + ' frames');`,
        fails: /no process via stack frame|no process in \d+ frames/,
      },
      {
        name: 'caller chain',
        code: `let f = (function () { return arguments.callee.caller; })();
while (f && f.caller) f = f.caller;
return hit(f && f.constructor('return globalThis.process')(), 'caller chain');`,
        // The walk ends at a strict-mode frame of the wrapper, or at the top with nothing.
        fails: /no process via caller chain|may not be accessed on strict mode functions/,
      },
      {
        name: 'setTimeout callback',
        code: "await new Promise((resolve) => setTimeout(() => resolve(hit(globalThis.process, 'setTimeout')), 0)); return 1;",
        fails: /no process via setTimeout/,
      },
      {
        name: 'setInterval callback',
        code: "await new Promise((resolve) => setInterval(() => resolve(hit(globalThis.process, 'setInterval')), 1)); return 1;",
        fails: /no process via setInterval/,
      },
      {
        name: 'timer and console constructors',
        code: "return hit(setTimeout.constructor('return process')() ?? console.log.constructor('return process')(), 'timer constructor');",
        fails: /process is not defined/,
      },
      {
        name: 'setImmediate / queueMicrotask',
        code: '(globalThis.setImmediate ?? queueMicrotask)(() => {}); return 1;',
        fails: /queueMicrotask is not defined/,
      },
      {
        name: 'fetch to 127.0.0.1 (the default egress policy: public hosts only)',
        code: "return await fetch('http://127.0.0.1:LISTENER_PORT/escaped');",
        fails: /127\.0\.0\.1:\d+ is a loopback address; EGRESS=public,127\.0\.0\.1:\d+ would allow it/,
        errorCode: 'EGRESS_DENIED',
      },
      {
        name: 'fetch to [::127.0.0.1], IPv4-compatible IPv6 for loopback',
        code: "return await fetch('http://[::127.0.0.1]:LISTENER_PORT/escaped');",
        fails: /\[::7f00:1\]:\d+ is a loopback address/,
        errorCode: 'EGRESS_DENIED',
      },
      {
        name: 'fetch to localhost, a name for loopback',
        code: "return await fetch('http://localhost:LISTENER_PORT/escaped');",
        fails: /localhost:\d+ resolves to .*loopback address; EGRESS=public,localhost:\d+ would allow it/,
        errorCode: 'EGRESS_DENIED',
      },
      {
        name: 'WebSocket to 127.0.0.1',
        code: "new WebSocket('ws://127.0.0.1:LISTENER_PORT/'); return 1;",
        fails: /WebSocket is not defined/,
      },
      {
        name: 'XMLHttpRequest',
        code: "const x = new XMLHttpRequest(); x.open('GET', 'http://127.0.0.1/'); return 1;",
        fails: /XMLHttpRequest is not defined/,
      },
    ];

    it('refuses every escape inside the isolate, and the same engine serves on', async () => {
      await addFlow('control', 'return { sum: inputs.a + inputs.b };', {
        a: '{{trigger.a}}',
        b: '{{trigger.b}}',
      });
      const before = await run('control', { a: 1, b: 2 });
      expect(before.status).toBe('SUCCEEDED');
      const pid = enginePid(before);
      expect(pid).toBeGreaterThan(0);

      const seen: Array<[string, string, string | undefined]> = [];
      for (const [index, attempt] of attempts().entries()) {
        const code = attempt.code
          .replaceAll('LISTENER_PORT', String(listenerPort))
          .replaceAll('MARKER_PATH', JSON.stringify(marker));
        await addFlow(`escape-${index}`, `${payload()}${code}`);
        const view = await run(`escape-${index}`);
        seen.push([attempt.name, view.status, view.error?.message]);
        expect(view.status, attempt.name).toBe('FAILED');
        expect(view.error, attempt.name).toMatchObject({
          code: attempt.errorCode ?? 'CODE_STEP_FAILED',
          step: 'step_1',
        });
        expect(view.error?.message, attempt.name).toMatch(attempt.fails);
        expect(enginePid(view), `${attempt.name} ran in another engine`).toBe(pid);
      }
      console.info(seen.map(([name, status, message]) => `${name}: ${status} ${message}`).join('\n'));

      // Nothing reached the engine's process: no file, no connection, no output.
      expect(existsSync(marker)).toBe(false);
      expect(connections).toBe(0);
      expect(lines.filter((line) => line.includes(ESCAPED))).toEqual([]);
      const after = await run('control', { a: 2, b: 3 });
      expect(after.status).toBe('SUCCEEDED');
      expect(after.steps.find((s) => s.name === 'step_1')?.output).toEqual({ sum: 5 });
      expect(enginePid(after)).toBe(pid);

      // The control for the listener: it does count a connection when one is made.
      const counted = once(listener, 'connection');
      netConnect(listenerPort, '127.0.0.1').on('error', () => {});
      await counted;
      expect(connections).toBe(1);
    });

    it('bounds timer abuse with the step timeout: an endless microtask loop, Atomics.wait', async () => {
      // Each is stopped within the code-step timeout plus 2 s; its isolate is replaced, not the engine.
      const hogs: Record<string, string> = {
        microtasks: 'for (;;) { await null; }',
        'atomics-wait': 'Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 600_000); return 1;',
        // No WebAssembly loop: code steps have no WebAssembly (its memory is outside the step's
        // limit; engine-memory.test.ts).
      };
      const pid = enginePid(await run('control', { a: 0, b: 0 }));
      for (const [name, code] of Object.entries(hogs)) {
        await addFlow(`hog-${name}`, code);
        const started = performance.now();
        const view = await run(`hog-${name}`);
        expect(view.status, name).toBe('FAILED');
        expect(view.error, name).toMatchObject({ code: 'CODE_STEP_TIMEOUT', step: 'step_1' });
        expect(view.timings?.runMs, name).toBeLessThan(CODE_STEP_TIMEOUT_MS + 2_000);
        console.info(
          `${name}: ${view.error?.code} after ${(performance.now() - started).toFixed(0)} ms end to end`,
        );
        expect(enginePid(view), name).toBe(pid);
      }
      const after = await run('control', { a: 20, b: 22 });
      expect(after.status).toBe('SUCCEEDED');
      expect(enginePid(after)).toBe(pid);
    });

    it("keeps each run's globals, prototypes and inputs to itself", async () => {
      await addFlow(
        'pollute',
        `Object.prototype.polluted = inputs.secret;
Array.prototype.map = function () { return ['hijacked'] };
JSON.parse = () => ({ hijacked: true });
JSON.stringify = () => '"hijacked"';
globalThis.stash = inputs.secret;
return 'polluted';`,
        { secret: '{{trigger.secret}}' },
      );
      // Replacing Promise.prototype.then breaks the wrapper's own chain: that run never settles
      // and ends at its step timeout, inside its own context, and the next one does not notice.
      await addFlow(
        'hijack-then',
        `Promise.prototype.then = function () { return this; };
globalThis.stash = inputs.secret;
return 'hijacked';`,
        { secret: '{{trigger.secret}}' },
      );
      await addFlow(
        'peek',
        `return {
  polluted: ({}).polluted ?? null,
  stash: globalThis.stash ?? null,
  map: [1, 2].map((n) => n * 2),
  parsed: JSON.parse('{"a":1}'),
  awaited: await Promise.resolve('then works'),
  globals: Object.keys(globalThis),
  mine: inputs.mine,
};`,
        { mine: '{{trigger.mine}}' },
      );
      const expected = {
        polluted: null,
        stash: null,
        map: [2, 4],
        parsed: { a: 1 },
        awaited: 'then works',
        // The code-step API's own globals, fresh in every run; nothing a run left behind.
        globals: ['setTimeout', 'setInterval', 'clearTimeout', 'clearInterval', 'fetch'],
        mine: 'run-b',
      };
      const polluted = await run('pollute', { secret: 'secret-of-run-a' });
      expect(polluted.status).toBe('SUCCEEDED');
      expect(polluted.steps.find((s) => s.name === 'step_1')?.output).toBe('polluted');
      const peek = await run('peek', { mine: 'run-b' });
      expect(peek.status).toBe('SUCCEEDED');
      expect(peek.steps.find((s) => s.name === 'step_1')?.output).toEqual(expected);

      const hijacked = await run('hijack-then', { secret: 'secret-of-run-c' });
      expect(hijacked.status).toBe('FAILED');
      expect(hijacked.error?.code).toBe('CODE_STEP_TIMEOUT');
      const peekAgain = await run('peek', { mine: 'run-b' });
      expect(peekAgain.steps.find((s) => s.name === 'step_1')?.output).toEqual(expected);

      for (const view of [peek, peekAgain]) {
        expect(JSON.stringify(view)).not.toMatch(/secret-of-run-[ac]/);
        // The engine's own JSON and promises were never touched: it records and reports as ever.
        expect(view.logKey).not.toBeNull();
        expect(enginePid(view)).toBe(enginePid(polluted));
      }
    });
  },
);
