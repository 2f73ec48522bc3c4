import { wrapCodeStep } from '@flowbox/protocol';
import { afterEach, describe, expect, it } from 'vitest';
import type { CodeRunRequest } from './code-runner.ts';
import { openCodeStepSession } from './code-step-host.ts';
import { createIsolatedVmRunner, type IsolatedVmRunner } from './isolated-vm-runner.ts';

let runner: IsolatedVmRunner;

afterEach(() => runner.close());

const newRunner = () => {
  runner = createIsolatedVmRunner({
    onCatastrophicError: (message) => {
      throw new Error(`catastrophic isolate error in a test: ${message}`);
    },
  });
  return runner;
};

function request(code: string, overrides: Partial<CodeRunRequest> = {}): CodeRunRequest {
  const { host } = openCodeStepSession(() => Promise.reject(new Error('no network in this test')));
  return { source: wrapCodeStep(code), inputs: { n: 1 }, timeoutMs: 1_000, memoryMb: 16, host, ...overrides };
}

describe('isolated-vm runner: one isolate, a fresh context per run', () => {
  it('stays flat over 2,000 runs that each leave garbage in their context', async () => {
    newRunner();
    // Each run keeps ~100 kB reachable from its own global scope until its context goes.
    const code = 'globalThis.kept = new Array(12_500).fill(inputs.n); return kept.length;';
    for (let i = 1; i <= 2_000; i += 1) {
      // On a loaded machine V8 may collect released contexts late, so the limit leaves room for
      // that; a leak (~200 MB by the end) is still far past it.
      await expect(runner.run(request(code, { memoryMb: 32 }))).resolves.toBe(12_500);
    }
    // 2,000 unreleased contexts would hold ~200 MB: the 32 MB limit would have killed the isolate
    // and the runs after it would have needed new ones. Heap samples are not compared: when V8
    // collects is up to its load, and a threshold on them failed on a busy machine.
    expect(await runner.stats()).toMatchObject({ isolatesCreated: 1, runs: 2_000 });
  });

  it('keeps the isolate after a failed run and replaces it after a timeout or the memory limit', async () => {
    newRunner();
    await runner.run(request('return 1;'));
    await expect(runner.run(request("throw new Error('x');"))).rejects.toMatchObject({
      code: 'CODE_STEP_FAILED',
    });
    expect((await runner.stats()).isolatesCreated).toBe(1);

    await expect(runner.run(request('while (true) {}', { timeoutMs: 100 }))).rejects.toMatchObject({
      code: 'CODE_STEP_TIMEOUT',
    });
    expect(await runner.stats()).toMatchObject({ isolatesCreated: 1, heap: null });
    await expect(runner.run(request('return inputs.n;'))).resolves.toBe(1);
    expect((await runner.stats()).isolatesCreated).toBe(2);

    const hog = 'const hoard = []; while (true) { hoard.push(new Array(100_000).fill(1)); }';
    await expect(runner.run(request(hog, { timeoutMs: 10_000 }))).rejects.toMatchObject({
      code: 'CODE_STEP_MEMORY_LIMIT',
    });
    await expect(runner.run(request('return inputs.n;'))).resolves.toBe(1);
    expect((await runner.stats()).isolatesCreated).toBe(3);
  });

  it('creates a new isolate when a run asks for another memory limit', async () => {
    newRunner();
    await runner.run(request('return 1;', { memoryMb: 16 }));
    await runner.run(request('return 1;', { memoryMb: 32 }));
    expect((await runner.stats()).isolatesCreated).toBe(2);
  });

  it('runs one step at a time, so a timeout never disposes the isolate under another run', async () => {
    newRunner();
    const results = await Promise.allSettled([
      runner.run(request('while (true) {}', { timeoutMs: 100 })),
      runner.run(request('return inputs.n + 1;')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
  });

  it('fails a run as INTERNAL when isolated-vm cannot be loaded: the engine is broken, not the code', async () => {
    runner = createIsolatedVmRunner({
      onCatastrophicError: () => {},
      loadIsolatedVm: () => Promise.reject(new Error("Cannot find package 'isolated-vm'")),
    });
    await expect(runner.run(request('return 1;'))).rejects.toMatchObject({
      code: 'INTERNAL',
      message: /isolated-vm could not be loaded: Cannot find package/,
    });
  });
});
