import type { EngineJob, FlowDefinition, RunOutcome } from '@flowbox/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { SEEDED_FLOW } from '../../test/support/index.ts';
import { action, code, flowOf, pieceStep, writeTestPiece } from '../../test/support/isolate-harness.ts';
import type { ProvisionedPiece } from '../pieces/piece-loader.ts';

const h = useExecutorHarness();

let hog: ProvisionedPiece;
let nodePiece: ProvisionedPiece;
beforeAll(async () => {
  hog = await writeTestPiece(h.dir, {
    name: 'hog',
    actions: [
      action('spin', '()=>{for(;;){}}'),
      action('hoard', '()=>{const kept=[];for(;;)kept.push(new Array(100000).fill(kept.length));}'),
      action('hang', '()=>new Promise(()=>{})'),
      // What V8 allocates outside the isolate's heap limit, which code steps do not have either.
      action(
        'wasm',
        '()=>{const m=new WebAssembly.Memory({initial:1,maximum:65536});m.grow(8191);return m.buffer.byteLength;}',
      ),
      action(
        'resize',
        '()=>{const b=new ArrayBuffer(1,{maxByteLength:1e9});b.resize(5e8);return b.byteLength;}',
      ),
      action(
        'grow',
        '()=>{const b=new SharedArrayBuffer(1,{maxByteLength:1e9});b.grow(5e8);return b.byteLength;}',
      ),
      action('kept', '()=>[new ArrayBuffer(8).transfer(16).byteLength,typeof WebAssembly]'),
      action(
        'chatty',
        "async()=>{console.log('from the piece');await new Promise(r=>setTimeout(r,5));return 'done';}",
      ),
    ].join(','),
  });
  nodePiece = await writeTestPiece(h.dir, {
    name: 'hasher',
    head: 'import{createHash}from"node:crypto";',
    actions: action('hash', '()=>createHash("sha256").update("x").digest("hex").length'),
  });
});

const LIMITS = { flowTimeoutMs: 4_000, codeStepTimeoutMs: 500, codeStepMemoryMb: 32 };

async function run(
  flow: FlowDefinition,
  overrides: Partial<EngineJob> = {},
  extra: ProvisionedPiece[] = [hog],
): Promise<RunOutcome> {
  const job = await h.job(flow, { isolation: 'isolate', limits: LIMITS, ...overrides });
  // A worker sends the pieces of the job's flow: a piece that cannot load fails only its flows.
  const { outcome } = await h.executor.execute({ ...job, pieces: [...job.pieces, ...extra] });
  return outcome;
}

/** The same engine (executor, isolated-vm, snapshots) answers the next run. */
async function nextRunAnswers(): Promise<void> {
  const outcome = await run(SEEDED_FLOW);
  expect(outcome.status).toBe('SUCCEEDED');
  expect(outcome.steps[3]?.output).toMatchObject({ body: { result: 6 } });
}

describe('limits of a run in its own isolate', () => {
  it.each([
    [
      'a piece past its CPU time',
      flowOf(pieceStep('step_1', 'hog', 'spin')),
      'CODE_STEP_TIMEOUT',
      /more than its 500 ms of CPU/,
    ],
    [
      'a piece past its memory',
      flowOf(pieceStep('step_1', 'hog', 'hoard')),
      'CODE_STEP_MEMORY_LIMIT',
      /past its 32 MB/,
    ],
    ['a code step looping', flowOf(code('step_1', 'for (;;) {}')), 'CODE_STEP_TIMEOUT', /500 ms/],
    [
      'a code step hoarding',
      // Chunks of 16 MB or more: the heap limit is met in two allocations, long before the
      // step's 500 ms (wall clock as well as CPU), however loaded the machine.
      flowOf(code('step_1', 'const kept = []; for (;;) kept.push(new Array(4_000_000).fill(kept.length));')),
      'CODE_STEP_MEMORY_LIMIT',
      /32 MB/,
    ],
    [
      'a piece that never settles',
      flowOf(pieceStep('step_1', 'hog', 'hang')),
      'FLOW_TIMEOUT',
      /time ran out/,
    ],
  ])(
    '%s ends the run with its code, and the next run answers in a fresh isolate',
    async (_name, flow, errorCode, message) => {
      const outcome = await run(flow);
      expect(outcome.error).toMatchObject({ code: errorCode, step: 'step_1' });
      expect(outcome.error?.message).toMatch(message);
      h.runIsolation.prepareNext();
      await nextRunAnswers();
      // The isolate that met the limit served no later run.
      expect(h.runIsolation.counts()).toMatchObject({ isolates: 2, runs: 2 });
    },
  );

  it.each([
    ['WebAssembly (a Memory grown to 512 MiB)', 'wasm', /WebAssembly is not defined/],
    ['ArrayBuffer resize', 'resize', /resize is not a function/],
    ['SharedArrayBuffer grow', 'grow', /grow is not a function/],
  ])(
    'a piece has no %s: its step fails naming it, and the next run answers',
    async (_name, actionName, message) => {
      const outcome = await run(flowOf(pieceStep('step_1', 'hog', actionName)));
      expect(outcome.status).toBe('FAILED');
      expect(outcome.error).toMatchObject({ step: 'step_1' });
      expect(outcome.error?.message).toMatch(message);
      await nextRunAnswers();
      // A step that failed without meeting a limit leaves its isolate to the next run.
      expect(h.runIsolation.counts()).toMatchObject({ isolates: 1, runs: 2 });
    },
  );

  it("a run's CPU time is its own: runs of one isolate that together pass the limit each succeed", async () => {
    // Each run spins 600 ms of wall time (up to as much CPU) under a 1,000 ms limit: four of them
    // pass it together, so a limit counted over the isolate's life would stop the second or third.
    const spinner = flowOf(
      code('step_1', 'const end = Date.now() + 600; while (Date.now() < end) {} return 1;'),
    );
    const limits = { ...LIMITS, codeStepTimeoutMs: 1_000, flowTimeoutMs: 10_000 };
    for (let i = 0; i < 4; i += 1) {
      const outcome = await run(spinner, { limits });
      expect(outcome.error).toBeUndefined();
      h.runIsolation.prepareNext();
    }
    expect(h.runIsolation.counts()).toMatchObject({ isolates: 1, runs: 4 });
  });

  it("a run that leaves its isolate's heap above half its limit gives the next run a fresh isolate", async () => {
    // About 20 MB of the 32 MB limit, still held when the run ends (garbage once its context goes).
    const hoarder = flowOf(
      code(
        'step_1',
        'globalThis.kept = Array.from({ length: 40 }, () => new Array(65536).fill(1.5)); return 1;',
      ),
    );
    expect((await run(hoarder)).status).toBe('SUCCEEDED');
    h.runIsolation.prepareNext();
    await nextRunAnswers();
    expect(h.runIsolation.counts()).toMatchObject({ isolates: 2, runs: 2 });
  });

  it('a piece keeps fixed-size buffers and transfer to a fixed length', async () => {
    const outcome = await run(flowOf(pieceStep('step_1', 'hog', 'kept')));
    expect(outcome.error).toBeUndefined();
    expect(outcome.steps[1]?.output).toEqual([16, 'undefined']);
  });

  it("captures a piece's console in its step, and its timers work within the step", async () => {
    const outcome = await run(flowOf(pieceStep('step_1', 'hog', 'chatty')));
    expect(outcome.error).toBeUndefined();
    expect(outcome.steps[1]).toMatchObject({
      output: 'done',
      logs: [{ level: 'log', message: 'from the piece' }],
    });
  });

  it('fails a piece that imports a Node built-in with PIECE_NOT_ISOLATABLE naming it; shared mode runs it', async () => {
    const flow = flowOf(pieceStep('step_1', 'hasher', 'hash'));
    const isolated = await run(flow, {}, [nodePiece]);
    expect(isolated.status).toBe('FAILED');
    expect(isolated.error).toMatchObject({ code: 'PIECE_NOT_ISOLATABLE' });
    expect(isolated.error?.message).toMatch(/hasher@0\.1\.0 .*imports the Node built-in 'node:crypto'/);
    const shared = await run(flow, { isolation: undefined }, [nodePiece]);
    expect(shared.status).toBe('SUCCEEDED');
    expect(shared.steps[1]?.output).toBe(64);
  });
});
