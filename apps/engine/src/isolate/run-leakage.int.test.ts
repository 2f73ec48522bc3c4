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

/** A first run that leaves everything behind that the issue lists. */
const LEAVER = flowOf(
  pieceStep('step_1', 'counter', 'count'),
  code(
    'step_2',
    `globalThis.leaked = 'run one';
Object.prototype.polluted = 'run one';
Array.prototype.map = function () { return ['patched by run one']; };
setInterval(() => { globalThis.ticks = (globalThis.ticks ?? 0) + 1; }, 1);
globalThis.pending = new Promise(() => {});
return { left: true };`,
  ),
);

/** What a later run can see of it. */
const OBSERVER = flowOf(
  pieceStep('step_1', 'counter', 'count'),
  code(
    'step_2',
    `return {
  leaked: typeof globalThis.leaked,
  polluted: typeof ({}).polluted,
  map: [1, 2].map((n) => n * 2),
  ticks: typeof globalThis.ticks,
  pending: typeof globalThis.pending,
};`,
  ),
);

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
  it('a second run of the same flow, and a run of another, see nothing the first left', async () => {
    const first = await run(LEAVER, { isolation: 'isolate' });
    expect(first.outcome.status).toBe('SUCCEEDED');
    expect(first.outcome.steps[1]?.output).toEqual({ calls: 1 });

    const seesNothing = {
      leaked: 'undefined',
      polluted: 'undefined',
      map: [2, 4],
      ticks: 'undefined',
      pending: 'undefined',
    };
    const again = await run(OBSERVER, { isolation: 'isolate' });
    expect(again.outcome.status).toBe('SUCCEEDED');
    expect(again.outcome.steps[1]?.output).toEqual({ calls: 1 });
    expect(again.outcome.steps[2]?.output).toEqual(seesNothing);

    const other = await run(OBSERVER, { isolation: 'isolate' }, 'flow-2');
    expect(other.outcome.status).toBe('SUCCEEDED');
    expect(other.outcome.steps[1]?.output).toEqual({ calls: 1 });
    expect(other.outcome.steps[2]?.output).toEqual(seesNothing);
  });

  it("a run starts from nothing of the snapshot's warm-up: no step of it in the run's scope", async () => {
    // The warm-up (run-runtime.ts) runs a trigger and steps step_1..step_3 of a piece of its own.
    const flow = flowOf(code('step_1', 'return inputs;', { left: '{{step_2}}' }));
    const { outcome } = await run(flow, { isolation: 'isolate' }, 'flow-3');
    expect(outcome.steps[1]?.error).toMatchObject({ code: 'TEMPLATE_ERROR' });
    expect(outcome.steps[1]?.error?.message).toContain("unknown step 'step_2'");
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
