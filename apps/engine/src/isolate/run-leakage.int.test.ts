import type { EngineJob, FlowDefinition } from '@flowbox/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { useExecutorHarness } from '../../test/support/flow-executor-harness.ts';
import { makeEngineJob, prepareEngineArtifacts } from '../../test/support/index.ts';
import { action, code, flowOf, pieceStep, writeTestPiece } from '../../test/support/isolate-harness.ts';
import type { ProvisionedPiece } from '../pieces/piece-loader.ts';

const h = useExecutorHarness();

/** Keeps a count in its module: a second run that sees 2 saw the first run's module state. */
let counter: ProvisionedPiece;
beforeAll(async () => {
  counter = await writeTestPiece(h.dir, {
    name: 'counter',
    head: 'let calls=0;',
    actions: action('count', '()=>({calls:++calls})'),
  });
});

/** A first run that leaves everything behind that a run's context separates. */
const LEAVER = flowOf(
  pieceStep('step_1', 'counter', 'count'),
  code(
    'step_2',
    `globalThis.leaked = 'run one';
Object.prototype.polluted = 'run one';
Array.prototype.map = function () { return ['patched by run one']; };
const { stringify } = JSON;
JSON.stringify = function (...args) {
  globalThis.captured = [...(globalThis.captured ?? []), args[0]];
  console.log('run one captured', stringify(args[0]));
  return stringify.apply(this, args);
};
setInterval(() => {
  globalThis.ticks = (globalThis.ticks ?? 0) + 1;
  console.log('run one timer');
}, 1);
globalThis.pending = new Promise((resolve) => { globalThis.resolvePending = resolve; });
globalThis.pending.then(() => console.log('run one promise'));
new Promise((resolve) => setTimeout(resolve, 5)).then(() => console.log('run one promise'));
Promise.resolve().then(function again() { globalThis.microtasks = (globalThis.microtasks ?? 0) + 1; });
return { left: true };`,
  ),
);

/**
 * What a later run can see of it, after giving a timer left running time to fire (a 1 ms
 * interval fires many times in 50 ms; none may reach this run).
 */
const OBSERVER = flowOf(
  pieceStep('step_1', 'counter', 'count'),
  code(
    'step_2',
    `await new Promise((resolve) => setTimeout(resolve, 50));
globalThis.resolvePending?.();
const secret = JSON.stringify({ token: 'run two secret' });
return {
  leaked: typeof globalThis.leaked,
  polluted: typeof ({}).polluted,
  map: [1, 2].map((n) => n * 2),
  stringify: String(JSON.stringify).includes('[native code]'),
  secret,
  captured: typeof globalThis.captured,
  ticks: typeof globalThis.ticks,
  pending: typeof globalThis.pending,
  microtasks: typeof globalThis.microtasks,
};`,
  ),
);

const SEES_NOTHING = {
  leaked: 'undefined',
  polluted: 'undefined',
  map: [2, 4],
  stringify: true,
  secret: '{"token":"run two secret"}',
  captured: 'undefined',
  ticks: 'undefined',
  pending: 'undefined',
  microtasks: 'undefined',
};

async function run(flow: FlowDefinition, overrides: Partial<EngineJob>, flowId = 'flow-1') {
  const artifacts = await prepareEngineArtifacts(h.dir, flow, { flowId });
  const job = makeEngineJob(h.app.url, h.app.logUploadUrl('runs/run-1.json'), {
    ...artifacts,
    flowId,
    ...overrides,
  });
  return h.executor.execute({ ...job, pieces: [...job.pieces, counter] });
}

describe('cross-run leakage with RUN_ISOLATION=isolate', () => {
  it('a second run of the same flow, and a run of another, in the same isolate, see nothing the first left', async () => {
    const first = await run(LEAVER, { isolation: 'isolate' });
    expect(first.outcome.status).toBe('SUCCEEDED');
    expect(first.outcome.steps[1]?.output).toEqual({ calls: 1 });
    // As the engine does once a result is sent: the next run's context is made now.
    h.runIsolation.prepareNext();

    const again = await run(OBSERVER, { isolation: 'isolate' });
    h.runIsolation.prepareNext();
    const other = await run(OBSERVER, { isolation: 'isolate' }, 'flow-2');
    for (const later of [again, other]) {
      expect(later.outcome.status).toBe('SUCCEEDED');
      // The piece's module was evaluated afresh for the run's context.
      expect(later.outcome.steps[1]?.output).toEqual({ calls: 1 });
      expect(later.outcome.steps[2]?.output).toEqual(SEES_NOTHING);
      // Nothing of run one's timers, promises or patched JSON.stringify reached a later run's logs.
      expect(JSON.stringify(later.outcome.steps)).not.toContain('run one');
    }
    // The three runs took contexts of one isolate: the separation above is the context's.
    expect(h.runIsolation.counts()).toMatchObject({ isolates: 1, runs: 3 });
  });

  it('an isolate recycled after ISOLATE_MAX_RUNS runs gives the next run a fresh one', async () => {
    for (let i = 0; i < 3; i += 1) {
      const { outcome } = await run(OBSERVER, { isolation: 'isolate', isolateMaxRuns: 2 });
      expect(outcome.steps[2]?.output).toEqual(SEES_NOTHING);
      h.runIsolation.prepareNext();
    }
    expect(h.runIsolation.counts()).toMatchObject({ isolates: 2, runs: 3 });
  });

  it("a run starts from nothing of the snapshot's warm-up: no step of it in the run's scope", async () => {
    // The warm-up (run-runtime.ts) runs a trigger and steps step_1..step_3 of a piece of its own.
    const flow = flowOf(code('step_1', 'return inputs;', { left: '{{step_2}}' }));
    const { outcome } = await run(flow, { isolation: 'isolate' }, 'flow-3');
    // The warm-up's step_2 is not in this run's scope: the template reads nothing, the field is left out.
    expect(outcome.steps[1]).toMatchObject({ status: 'SUCCEEDED', input: {}, output: {} });
  });

  it("the control: in shared mode a piece's module state does reach the next run", async () => {
    await run(flowOf(pieceStep('step_1', 'counter', 'count')), {});
    const second = await run(flowOf(pieceStep('step_1', 'counter', 'count')), {});
    expect(second.outcome.steps[1]?.output).toEqual({ calls: 2 });
  });

  it("within one run, a code step's globals reach the later steps of that run only", async () => {
    const flow = flowOf(
      code('step_1', "globalThis.shared = 'same run'; return 1;"),
      code('step_2', 'return typeof globalThis.shared;'),
    );
    const { outcome } = await run(flow, { isolation: 'isolate' });
    expect(outcome.steps[2]?.output).toBe('string');
  });
});
