import { isFlowboxError } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { type CodeRunRequest, createCodeRunner } from './code-runner.ts';

const runner = createCodeRunner({
  onCatastrophicError: (message) => {
    throw new Error(`catastrophic isolate error in a test: ${message}`);
  },
});

function request(code: string, overrides: Partial<CodeRunRequest> = {}): CodeRunRequest {
  return { code, inputs: {}, timeoutMs: 1_000, memoryMb: 16, ...overrides };
}

async function failure(req: CodeRunRequest): Promise<{ code: string; message: string }> {
  const error: unknown = await runner.run(req).then(
    () => undefined,
    (e: unknown) => e,
  );
  if (!isFlowboxError(error)) throw new Error(`expected a FlowboxError, got ${String(error)}`);
  return { code: error.code, message: error.message };
}

describe('code runner', () => {
  it('returns the value the code returns, with its inputs', async () => {
    await expect(
      runner.run(request('return { result: Number(inputs.sum) + 1 };', { inputs: { sum: 5 } })),
    ).resolves.toEqual({ result: 6 });
  });

  it('supports await and returns undefined when the code returns nothing', async () => {
    await expect(runner.run(request('await null; return [1, "a", null];'))).resolves.toEqual([1, 'a', null]);
    await expect(runner.run(request('const x = 1;'))).resolves.toBeUndefined();
  });

  it('maps a thrown error to CODE_STEP_FAILED with the user message', async () => {
    const { code, message } = await failure(request("throw new Error('boom')"));
    expect(code).toBe('CODE_STEP_FAILED');
    expect(message).toContain('boom');
  });

  it("keeps the user's stack, with lines counted from the first line of the code", async () => {
    const error: unknown = await runner.run(request('const a = 1;\nnull.x;')).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: 'CODE_STEP_FAILED',
      stack: expect.stringContaining('code-step.js:2:'),
    });
  });

  it('maps a syntax error and a non-JSON result to CODE_STEP_FAILED', async () => {
    expect((await failure(request('return {'))).code).toBe('CODE_STEP_FAILED');
    const bigint = await failure(request('return 1n;'));
    expect(bigint).toMatchObject({ code: 'CODE_STEP_FAILED', message: expect.stringMatching(/JSON/) });
  });

  it('stops a busy loop with CODE_STEP_TIMEOUT within timeout + 1 s', async () => {
    const started = performance.now();
    expect((await failure(request('while (true) {}', { timeoutMs: 300 }))).code).toBe('CODE_STEP_TIMEOUT');
    expect(performance.now() - started).toBeLessThan(1_300);
  });

  it('stops an awaited promise that never settles with CODE_STEP_TIMEOUT', async () => {
    const started = performance.now();
    const result = await failure(request('await new Promise(() => {});', { timeoutMs: 300 }));
    expect(result.code).toBe('CODE_STEP_TIMEOUT');
    expect(performance.now() - started).toBeLessThan(1_300);
  });

  it('stops a busy loop after an await with CODE_STEP_TIMEOUT', async () => {
    expect((await failure(request('await null; while (true) {}', { timeoutMs: 300 }))).code).toBe(
      'CODE_STEP_TIMEOUT',
    );
  });

  it('maps unbounded allocation to CODE_STEP_MEMORY_LIMIT, and the next run still works', async () => {
    const hog = 'const hoard = []; while (true) { hoard.push(new Array(100_000).fill(Math.random())); }';
    const result = await failure(request(hog, { memoryMb: 16, timeoutMs: 10_000 }));
    expect(result.code).toBe('CODE_STEP_MEMORY_LIMIT');
    await expect(runner.run(request('return inputs.n * 2;', { inputs: { n: 21 } }))).resolves.toBe(42);
  });

  it.each([
    ['process', 'return process.pid;', /process is not defined/],
    ['require', "return require('fs');", /require is not defined/],
    ['dynamic import', "return await import('node:fs');", /not supported/i],
    ['constructor escape', "return this.constructor.constructor('return process')().pid;", /process is not/],
    ['function escape', "return (() => {}).constructor('return process')().pid;", /process is not/],
    ['timers', 'return setTimeout(() => {}, 1);', /setTimeout is not defined/],
    ['fetch', "return await fetch('http://127.0.0.1:1');", /fetch is not defined/],
  ])('has no %s inside the isolate', async (_name, code, message) => {
    expect(await failure(request(code))).toMatchObject({ code: 'CODE_STEP_FAILED', message });
  });

  it('exposes an empty global scope', async () => {
    await expect(runner.run(request('return Object.keys(globalThis);'))).resolves.toEqual([]);
  });

  it('gives each run a fresh global scope', async () => {
    await runner.run(request('globalThis.leak = 1; JSON.stringify = () => "x"; return null;'));
    await expect(runner.run(request('return typeof globalThis.leak;'))).resolves.toBe('undefined');
  });
});
