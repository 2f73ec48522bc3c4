import { isFlowboxError, wrapCodeStep } from '@flowbox/protocol';
import { afterAll, describe, expect, it } from 'vitest';
import { codeRunnersByKind, type RunnerKind } from '../../test/support/code-runners.ts';
import type { CodeRunner, CodeRunRequest } from './code-runner.ts';
import { openCodeStepSession } from './code-step-host.ts';

/** One runner per execution mode, held to the same suite below. */
const RUNNERS = codeRunnersByKind();

afterAll(() => {
  for (const runner of Object.values(RUNNERS)) runner.close();
});

/** A host whose fetch refuses everything: these tests are about the runner, not HTTP. */
const refuse = () => Promise.reject(new Error('no network in this test'));

function request(code: string, overrides: Partial<CodeRunRequest> = {}): CodeRunRequest {
  const { host } = openCodeStepSession(refuse);
  return { source: wrapCodeStep(code), inputs: {}, timeoutMs: 1_000, memoryMb: 16, host, ...overrides };
}

async function failure(runner: CodeRunner, req: CodeRunRequest) {
  const error: unknown = await runner.run(req).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFlowboxError(error)) throw new Error(`expected a FlowboxError, got ${String(error)}`);
  return { code: error.code, message: error.message, stack: error.stack };
}

describe.each(Object.keys(RUNNERS) as RunnerKind[])('code runner, %s', (mode) => {
  const runner = RUNNERS[mode];
  const run = (code: string, overrides?: Partial<CodeRunRequest>) => runner.run(request(code, overrides));
  const fail = (code: string, overrides?: Partial<CodeRunRequest>) =>
    failure(runner, request(code, overrides));

  it('returns the value the code returns, with its inputs', async () => {
    await expect(run('return { result: Number(inputs.sum) + 1 };', { inputs: { sum: 5 } })).resolves.toEqual({
      result: 6,
    });
  });

  it('supports await and returns undefined when the code returns nothing', async () => {
    await expect(run('await null; return [1, "a", null];')).resolves.toEqual([1, 'a', null]);
    await expect(run('const x = 1;')).resolves.toBeUndefined();
  });

  it('returns JSON only: dates become strings, functions and undefined disappear', async () => {
    const code = 'return { d: new Date(0), f() {}, u: undefined, n: NaN, list: [undefined] };';
    await expect(run(code)).resolves.toEqual({ d: '1970-01-01T00:00:00.000Z', n: null, list: [null] });
  });

  it('rejects a result JSON cannot hold with CODE_STEP_FAILED', async () => {
    expect(await fail('return 1n;')).toMatchObject({ code: 'CODE_STEP_FAILED', message: /JSON/ });
    expect(await fail('const a = {}; a.a = a; return a;')).toMatchObject({
      code: 'CODE_STEP_FAILED',
      message: /JSON/,
    });
  });

  it('gives the code a copy of its inputs: mutating them changes nothing outside', async () => {
    const inputs = { list: [1], nested: { n: 1 } };
    const code = 'inputs.list.push(2); inputs.nested.n = 99; inputs.extra = true; return inputs;';
    const result = await run(code, { inputs });
    expect(result).toEqual({ list: [1, 2], nested: { n: 99 }, extra: true });
    expect(inputs).toEqual({ list: [1], nested: { n: 1 } });
  });

  it('maps a thrown error to CODE_STEP_FAILED with the user message and where it was thrown', async () => {
    expect(await fail("throw new Error('boom')")).toMatchObject({
      code: 'CODE_STEP_FAILED',
      message: 'boom (line 1, column 7)',
    });
    expect(await fail("throw new TypeError('bad type')")).toMatchObject({
      message: 'TypeError: bad type (line 1, column 7)',
    });
    expect(await fail("throw 'a string'")).toMatchObject({ code: 'CODE_STEP_FAILED', message: 'a string' });
    expect(await fail('await null; throw { reason: 1 };')).toMatchObject({ message: '{"reason":1}' });
  });

  it("keeps the user's stack, with lines counted from the first line of the code", async () => {
    expect((await fail('const a = 1;\nnull.x;')).stack).toContain('code-step.js:2:');
  });

  it("keeps only frames on the user's lines: not the wrapper's around them", async () => {
    const { stack } = await fail("const fail = () => {\n  throw new Error('x');\n};\nfail();");
    const lines = [...(stack ?? '').matchAll(/code-step\.js:(\d+):\d+/g)].map((match) => Number(match[1]));
    expect(lines).toEqual([2, 4]);
  });

  it('maps a syntax error to CODE_STEP_FAILED', async () => {
    expect(await fail('return {')).toMatchObject({ code: 'CODE_STEP_FAILED', message: /SyntaxError/ });
  });

  it("says where in the user's code an error happened: line and column, counted from 1", async () => {
    expect((await fail('const a = 1;\n  return {;')).message).toBe(
      "SyntaxError: Unexpected token ';' (line 2, column 11)",
    );
    expect((await fail('const s = `abc')).message).toBe(
      'SyntaxError: Unexpected end of input (end of the code, line 1)',
    );
    expect((await fail('const b = null;\n  return b.x;')).message).toBe(
      "TypeError: Cannot read properties of null (reading 'x') (line 2, column 12)",
    );
    const thrown = await fail("const f = () => {\n  throw new Error('boom');\n};\nawait null;\nf();");
    expect(thrown.message).toBe('boom (line 2, column 9)');
    // A value thrown without a stack has no position to give.
    expect((await fail("throw 'a string'")).message).toBe('a string');
  });

  it('stops a busy loop with CODE_STEP_TIMEOUT within the timeout plus 2 s, and runs the next step', async () => {
    const started = performance.now();
    expect((await fail('while (true) {}', { timeoutMs: 300 })).code).toBe('CODE_STEP_TIMEOUT');
    // The guarantee is the step timeout plus 2 s (a hung step must not hold a worker); not a speed figure.
    expect(performance.now() - started).toBeLessThan(2_300);
    await expect(run('return 1;')).resolves.toBe(1);
  });

  it('stops an awaited promise that never settles with CODE_STEP_TIMEOUT', async () => {
    const started = performance.now();
    expect((await fail('await new Promise(() => {});', { timeoutMs: 300 })).code).toBe('CODE_STEP_TIMEOUT');
    expect(performance.now() - started).toBeLessThan(2_300);
  });

  it('stops a busy loop after an await with CODE_STEP_TIMEOUT', async () => {
    expect((await fail('await null; while (true) {}', { timeoutMs: 300 })).code).toBe('CODE_STEP_TIMEOUT');
  });

  it('exposes only the code-step API as globals: console, timers and fetch', async () => {
    // V8 has a (non-enumerable) console of its own in a new context; the API replaces its methods.
    const code =
      "return [Object.keys(globalThis).filter((k) => k !== 'console').sort(), typeof console.log];";
    await expect(run(code)).resolves.toEqual([
      ['clearInterval', 'clearTimeout', 'fetch', 'setInterval', 'setTimeout'],
      'function',
    ]);
    expect(await fail('return setImmediate(() => {});')).toMatchObject({
      message: /setImmediate is not defined/,
    });
  });

  it('gives each run a fresh global scope', async () => {
    await run('globalThis.leak = 1; JSON.stringify = () => "x"; Array.prototype.push = null; return null;');
    await expect(run('return [typeof globalThis.leak, JSON.stringify([1])];')).resolves.toEqual([
      'undefined',
      '[1]',
    ]);
  });
});

describe('code runner, SANDBOX_CODE_ONLY only', () => {
  const runner = RUNNERS.SANDBOX_CODE_ONLY;

  it('maps unbounded allocation to CODE_STEP_MEMORY_LIMIT, and the next run still works', async () => {
    const hog = 'const hoard = []; while (true) { hoard.push(new Array(100_000).fill(Math.random())); }';
    const result = await failure(runner, request(hog, { memoryMb: 16, timeoutMs: 10_000 }));
    expect(result.code).toBe('CODE_STEP_MEMORY_LIMIT');
    await expect(runner.run(request('return inputs.n * 2;', { inputs: { n: 21 } }))).resolves.toBe(42);
  });

  it.each([
    ['process', 'return process.pid;', /process is not defined/],
    ['require', "return require('fs');", /require is not defined/],
    ['dynamic import', "return await import('node:fs');", /not supported/i],
    ['constructor escape', "return this.constructor.constructor('return process')().pid;", /process is not/],
    ['function escape', "return (() => {}).constructor('return process')().pid;", /process is not/],
  ])('has no %s inside the isolate', async (_name, code, message) => {
    expect(await failure(runner, request(code))).toMatchObject({ code: 'CODE_STEP_FAILED', message });
  });
});

describe('code runner, UNSANDBOXED only', () => {
  it('is no sandbox: the constructor escape reaches the engine process', async () => {
    const code = "return this.constructor.constructor('return process')().pid;";
    await expect(RUNNERS.UNSANDBOXED.run(request(code))).resolves.toBe(process.pid);
  });
});
