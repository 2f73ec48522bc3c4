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

  it('holds the memory limit for memory outside the V8 heap: ArrayBuffers counted, WebAssembly and resizable buffers taken away', async () => {
    newRunner();
    const limited = { code: 'CODE_STEP_MEMORY_LIMIT', message: /16 MB memory limit/ };
    const refused: Record<string, string> = {
      'one large ArrayBuffer': 'return new Uint8Array(new ArrayBuffer(1e9)).fill(1).length;',
      'many 4 MB buffers':
        'const kept = []; for (let i = 0; i < 250; i++) kept.push(new Uint8Array(4e6).fill(1)); return kept.length;',
      SharedArrayBuffers:
        'const kept = []; for (let i = 0; i < 250; i++) kept.push(new SharedArrayBuffer(4e6)); return kept.length;',
      'a resizable buffer transferred larger':
        'return new ArrayBuffer(1, { maxByteLength: 1e9 }).transfer(5e8).byteLength;',
    };
    for (const [name, code] of Object.entries(refused)) {
      await expect(runner.run(request(code)), name).rejects.toMatchObject(limited);
    }
    const absent: Record<string, [string, RegExp]> = {
      WebAssembly: [
        'const m = new WebAssembly.Memory({ initial: 1, maximum: 65536 }); m.grow(16000); return m.buffer.byteLength;',
        /WebAssembly is not defined/,
      ],
      'ArrayBuffer resize': [
        'const b = new ArrayBuffer(1, { maxByteLength: 1e9 }); b.resize(5e8); return b.byteLength;',
        /resize is not a function/,
      ],
      'SharedArrayBuffer grow': [
        'const b = new SharedArrayBuffer(1, { maxByteLength: 1e9 }); b.grow(5e8); return b.byteLength;',
        /grow is not a function/,
      ],
      'resize from the intrinsic prototype': [
        'return Object.getPrototypeOf(new Uint8Array(1).buffer).resize.call(new ArrayBuffer(1, { maxByteLength: 1e9 }), 5e8);',
        /Cannot read properties of undefined/,
      ],
    };
    for (const [name, [code, message]] of Object.entries(absent)) {
      await expect(runner.run(request(code)), name).rejects.toMatchObject({
        code: 'CODE_STEP_FAILED',
        message,
      });
    }
    // A refused allocation leaves the isolate as it was: the next run uses it, within the limit.
    await expect(runner.run(request('return new Uint8Array(8e6).fill(1).length;'))).resolves.toBe(8e6);
    expect(await runner.stats()).toMatchObject({ isolatesCreated: 1 });
    // What stays works: fixed-size buffers, transfer to a fixed length, typeof checks.
    await expect(
      runner.run(request('return [new ArrayBuffer(8).transfer(16).byteLength, typeof WebAssembly];')),
    ).resolves.toEqual([16, 'undefined']);
  });

  it('creates a new isolate when a run asks for another memory limit', async () => {
    newRunner();
    await runner.run(request('return 1;', { memoryMb: 16 }));
    await runner.run(request('return 1;', { memoryMb: 32 }));
    expect((await runner.stats()).isolatesCreated).toBe(2);
  });

  it('makes the next context ahead, as fresh as one made on demand, after a success and a failure', async () => {
    newRunner();
    const probe = request('return [typeof globalThis.left, typeof globalThis.failedLeft];');
    await runner.run(request('globalThis.left = 1; return 1;'));
    await expect(runner.run(probe)).resolves.toEqual(['undefined', 'undefined']);
    await expect(
      runner.run(request("globalThis.failedLeft = 1; throw new Error('x');")),
    ).rejects.toMatchObject({
      code: 'CODE_STEP_FAILED',
    });
    await expect(runner.run(probe)).resolves.toEqual(['undefined', 'undefined']);
    // After a timeout the context made ahead goes with its isolate; the next run gets a new one.
    await expect(runner.run(request('while (true) {}', { timeoutMs: 100 }))).rejects.toMatchObject({
      code: 'CODE_STEP_TIMEOUT',
    });
    await expect(runner.run(probe)).resolves.toEqual(['undefined', 'undefined']);
    expect(await runner.stats()).toMatchObject({ isolatesCreated: 2, runs: 6 });
  });

  it('runs steps at once each in an isolate of its own, so a timeout never disposes the isolate under another run', async () => {
    newRunner();
    const results = await Promise.allSettled([
      runner.run(request('while (true) {}', { timeoutMs: 100 })),
      runner.run(request('return inputs.n + 1;')),
    ]);
    expect(results.map((r) => r.status)).toEqual(['rejected', 'fulfilled']);
    expect((await runner.stats()).isolatesCreated).toBe(2);
  });

  it('runs steps that wait at once, an isolate each, and keeps one isolate once none runs', async () => {
    newRunner();
    const sleeper = request("await new Promise((r) => setTimeout(r, 50)); return 'done';");
    // One at a time, one isolate would have served all three.
    await expect(Promise.all([1, 2, 3].map(() => runner.run(sleeper)))).resolves.toEqual([
      'done',
      'done',
      'done',
    ]);
    expect((await runner.stats()).isolatesCreated).toBe(3);
    await expect(runner.run(request('return inputs.n;'))).resolves.toBe(1);
    expect((await runner.stats()).isolatesCreated).toBe(3);
  });

  it("runs one run's code steps in one context, until endRun; another run starts fresh", async () => {
    newRunner();
    const run = {};
    const other = {};
    await runner.run({ ...request("globalThis.left = 'run one'; return 1;"), run });
    const probe = request('return typeof globalThis.left;');
    await expect(runner.run({ ...probe, run })).resolves.toBe('string');
    await expect(runner.run({ ...probe, run: other })).resolves.toBe('undefined');
    await expect(runner.run(probe)).resolves.toBe('undefined');
    runner.endRun(run);
    await expect(runner.run({ ...probe, run })).resolves.toBe('undefined');
    runner.endRun(run);
    runner.endRun(other);
    expect((await runner.stats()).isolatesCreated).toBe(1);
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
