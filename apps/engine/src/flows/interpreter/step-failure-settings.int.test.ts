import type { FlowDefinition, StepResult } from '@flowbox/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { addStep, codeStep, FLOW_MODES, triggerWith } from '../../../test/support/flow-constructs.ts';
import { useExecutorHarness } from '../../../test/support/flow-executor-harness.ts';
import { SEEDED_FLOW } from '../../../test/support/index.ts';
import { action, flowOf, writeTestPiece } from '../../../test/support/isolate-harness.ts';
import type { ProvisionedPiece } from '../../pieces/piece-loader.ts';

const h = useExecutorHarness();

let stall: ProvisionedPiece;
beforeAll(async () => {
  stall = await writeTestPiece(h.dir, { name: 'stall', actions: action('hang', '()=>new Promise(()=>{})') });
});

/** The same engine answers the seeded flow after. */
async function nextRunAnswers(mode: Parameters<typeof h.job>[1]): Promise<void> {
  h.runIsolation.prepareNext();
  const { outcome } = await h.executor.execute(await h.job(SEEDED_FLOW, mode));
  expect(outcome.status).toBe('SUCCEEDED');
}

const byName = (steps: StepResult[], name: string) => steps.find((step) => step.name === name);

describe.each(FLOW_MODES)('step failure settings and bad input, %s', (_mode, mode) => {
  it('continueOnFailure: the error becomes the output later steps read, the run goes on', async () => {
    const flow = flowOf(
      codeStep('boom', "throw new Error('no stock');", {}, { continueOnFailure: true }),
      codeStep('after', 'return inputs;', { code: '{{boom.error.code}}', message: '{{boom.error.message}}' }),
    );
    const { outcome } = await h.executor.execute(await h.job(flow, mode));
    expect(outcome.status).toBe('SUCCEEDED');
    expect(outcome.error).toBeUndefined();
    expect(byName(outcome.steps, 'boom')).toMatchObject({
      status: 'FAILED',
      continued: true,
      error: { code: 'CODE_STEP_FAILED', step: 'boom' },
      output: { error: { code: 'CODE_STEP_FAILED', message: expect.stringContaining('no stock') } },
    });
    expect(byName(outcome.steps, 'after')?.output).toMatchObject({ code: 'CODE_STEP_FAILED' });
  });

  it.each([
    [
      'a code step that waits',
      codeStep('slow', 'await new Promise((r) => setTimeout(r, 20_000)); return 1;', {}, { timeoutMs: 300 }),
    ],
    ['a code step that spins', codeStep('slow', 'for (;;) {}', {}, { timeoutMs: 300 })],
    [
      'a piece that never settles',
      { type: 'piece', name: 'slow', piece: 'stall', action: 'hang', input: {}, timeoutMs: 300 } as const,
    ],
  ])('timeoutMs: %s fails STEP_TIMEOUT, and the next run answers', async (_name, step) => {
    const job = await h.job(flowOf(step, codeStep('never', 'return 1;')), mode);
    const { outcome } = await h.executor.execute({ ...job, pieces: [...job.pieces, stall] });
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'STEP_TIMEOUT', step: 'slow' });
    expect(outcome.error?.message).toMatch(/timeoutMs \(300 ms\)/);
    expect(byName(outcome.steps, 'never')).toBeUndefined();
    await nextRunAnswers(mode);
  });

  it('timeoutMs with continueOnFailure: the run goes on past the stopped step', async () => {
    const flow = flowOf(
      codeStep(
        'slow',
        'await new Promise((r) => setTimeout(r, 20_000));',
        {},
        { timeoutMs: 300, continueOnFailure: true },
      ),
      codeStep('after', 'return inputs;', { code: '{{slow.error.code}}' }),
    );
    const { outcome } = await h.executor.execute(await h.job(flow, mode));
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byName(outcome.steps, 'after')?.output).toEqual({ code: 'STEP_TIMEOUT' });
  });

  it.each([
    [
      'loop items that are not an array',
      flowOf({
        type: 'loop',
        name: 'each',
        items: '{{trigger.body.total}}',
        concurrency: 1,
        steps: [codeStep('x', 'return 1;')],
      }),
      {
        code: 'INVALID_STEP_INPUT',
        step: 'each',
        message: 'loop each: items must resolve to an array, not a number',
      },
    ],
    [
      'a condition comparing a number with a string',
      flowOf({
        type: 'router',
        name: 'route',
        mode: 'first',
        branches: [
          { name: 'big', when: [[{ left: '{{trigger.body.total}}', op: 'gt', right: 'lots' }]], steps: [] },
        ],
      }),
      {
        code: 'INVALID_STEP_INPUT',
        step: 'route',
        message: `branch big: 'gt' compares numbers or ISO dates, not number 7 with the string "lots"`,
      },
    ],
    [
      'a loop over more than LOOP_MAX_ITERATIONS items',
      flowOf({
        type: 'loop',
        name: 'each',
        items: [1, 2, 3, 4, 5, 6],
        concurrency: 2,
        steps: [codeStep('x', 'return 1;')],
      }),
      { code: 'LOOP_TOO_MANY_ITERATIONS', step: 'each', message: expect.stringContaining('more than the 5') },
    ],
  ] satisfies [string, FlowDefinition, object][])(
    '%s fails its step with a clear error',
    async (_name, flow, error) => {
      const job = await h.job(flow, { ...mode, trigger: triggerWith({ total: 7 }) });
      const { outcome } = await h.executor.execute({
        ...job,
        limits: { ...job.limits, loopMaxIterations: 5 },
      });
      expect(outcome.status).toBe('FAILED');
      expect(outcome.error).toMatchObject(error);
      expect(outcome.steps.at(-1)).toMatchObject({ status: 'FAILED', error });
    },
  );

  it('a loop of LOOP_MAX_ITERATIONS items at concurrency 16 ends within its flow timeout; the next run answers', async () => {
    const items = Array.from({ length: 1_000 }, (_, index) => index);
    const flow = flowOf(
      {
        type: 'loop',
        name: 'each',
        items: '{{trigger.body.items}}',
        concurrency: 16,
        steps: [addStep('plus', '{{each.item}}', 1)],
      },
      codeStep('total', 'return inputs.all.reduce((sum, it) => sum + it.plus.result, 0);', {
        all: '{{each.iterations}}',
      }),
    );
    const job = await h.job(flow, { ...mode, trigger: triggerWith({ items }) });
    const { outcome } = await h.executor.execute({
      ...job,
      limits: { ...job.limits, flowTimeoutMs: 60_000 },
    });
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byName(outcome.steps, 'total')?.output).toBe((999 * 1_000) / 2 + 1_000);
    await nextRunAnswers(mode);
  });
});
