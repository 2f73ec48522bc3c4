import {
  BENCHMARK_LOOP_FLOW,
  BENCHMARK_ROUTER_FLOW,
  type FlowDefinition,
  FlowResponseReportSchema,
  type StepResult,
} from '@flowbox/protocol';
import { beforeAll, describe, expect, it } from 'vitest';
import { addStep, codeStep, FLOW_MODES, triggerWith } from '../../../test/support/flow-constructs.ts';
import { useExecutorHarness } from '../../../test/support/flow-executor-harness.ts';
import { action, flowOf, pieceStep, writeTestPiece } from '../../../test/support/isolate-harness.ts';
import type { ProvisionedPiece } from '../../pieces/piece-loader.ts';

const h = useExecutorHarness();

/** A piece whose action waits on a timer: iterations at once must not end each other's timers. */
let sleepy: ProvisionedPiece;
beforeAll(async () => {
  sleepy = await writeTestPiece(h.dir, {
    name: 'sleepy',
    actions: action('nap', "async()=>{await new Promise((r)=>setTimeout(r,30));return 'rested';}"),
  });
});

/** Each step's path with its status, in the order the run recorded them. */
const paths = (steps: StepResult[]) => steps.map((step) => `${step.path} ${step.status}`);
const byPath = (steps: StepResult[], path: string) => steps.find((step) => step.path === path);

const ROUTER_FIRST: FlowDefinition = flowOf(
  {
    type: 'router',
    name: 'route',
    mode: 'first',
    branches: [
      {
        name: 'big',
        when: [[{ left: '{{trigger.body.total}}', op: 'gt', right: 100 }]],
        steps: [codeStep('note_big', "return 'big';")],
      },
      {
        name: 'also_big',
        when: [[{ left: '{{trigger.body.total}}', op: 'gte', right: '100' }]],
        steps: [codeStep('note_also', "return 'also';")],
      },
    ],
    otherwise: [codeStep('note_none', "return 'none';")],
  },
  codeStep('after', 'return inputs;', { branch: '{{route.branch}}' }),
);

const LOOP_NESTED: FlowDefinition = flowOf(
  {
    type: 'loop',
    name: 'outer',
    items: '{{trigger.body.rows}}',
    concurrency: 1,
    steps: [
      {
        type: 'loop',
        name: 'inner',
        items: '{{outer.item}}',
        concurrency: 2,
        steps: [
          codeStep('cell', 'return inputs;', {
            o: '{{outer.index}}',
            i: '{{inner.index}}',
            v: '{{inner.item}}',
          }),
        ],
      },
    ],
  },
  codeStep('cells', 'return inputs.rows.map((row) => row.inner.iterations.map((it) => it.cell.v));', {
    rows: '{{outer.iterations}}',
  }),
);

describe.each(FLOW_MODES)('flow constructs, %s', (_mode, mode) => {
  it('router first: the first branch that holds runs, the others are SKIPPED, {{route.branch}} after', async () => {
    const job = await h.job(ROUTER_FIRST, { ...mode, trigger: triggerWith({ total: 150 }) });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(paths(outcome.steps)).toEqual([
      'trigger SUCCEEDED',
      'route/also_big SKIPPED',
      'route/otherwise SKIPPED',
      'route/big/note_big SUCCEEDED',
      'route SUCCEEDED',
      'after SUCCEEDED',
    ]);
    expect(byPath(outcome.steps, 'route/also_big')?.skipReason).toBe('branch big ran first');
    expect(byPath(outcome.steps, 'route')?.output).toEqual({ branch: 'big' });
    expect(byPath(outcome.steps, 'after')?.output).toEqual({ branch: 'big' });
  });

  it('router otherwise: no branch holds, otherwise runs and {{route.branch}} names it', async () => {
    const job = await h.job(ROUTER_FIRST, { ...mode, trigger: triggerWith({ total: 5 }) });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byPath(outcome.steps, 'route/otherwise/note_none')?.output).toBe('none');
    expect(byPath(outcome.steps, 'route/big')?.skipReason).toMatch(/did not hold/);
    expect(byPath(outcome.steps, 'after')?.output).toEqual({ branch: 'otherwise' });
  });

  it.each([false, true])(
    'router all (parallel %s): every branch that holds runs; their outputs after',
    async (parallel) => {
      const flow = flowOf(
        {
          type: 'router',
          name: 'route',
          mode: 'all',
          parallel,
          branches: [
            {
              name: 'a',
              when: [[{ left: '{{trigger.body.tag}}', op: 'starts_with', right: 'vi' }]],
              steps: [codeStep('from_a', 'return 1;')],
            },
            {
              name: 'b',
              when: [
                [{ left: '{{trigger.body.tag}}', op: 'eq', right: 'nope' }],
                [{ left: '{{trigger.body.tag}}', op: 'matches', right: '^v[a-z]+p$' }],
              ],
              steps: [codeStep('from_b', 'return 2;')],
            },
            {
              name: 'c',
              when: [[{ left: '{{trigger.body.tag}}', op: 'empty' }]],
              steps: [codeStep('from_c', 'return 3;')],
            },
          ],
        },
        codeStep('after', 'return inputs;', {
          branches: '{{route.branches}}',
          a: '{{from_a}}',
          b: '{{from_b}}',
        }),
      );
      const { outcome } = await h.executor.execute(
        await h.job(flow, { ...mode, trigger: triggerWith({ tag: 'vip' }) }),
      );
      expect(outcome.status).toBe('SUCCEEDED');
      expect(byPath(outcome.steps, 'route/c')?.status).toBe('SKIPPED');
      expect(byPath(outcome.steps, 'after')?.output).toEqual({ branches: ['a', 'b'], a: 1, b: 2 });
    },
  );

  it('router conditions on a field the data does not have: exists, not_exists and empty test it', async () => {
    const when = (op: 'exists' | 'not_exists' | 'empty') => [[{ left: '{{trigger.body.email}}', op }]];
    const flow = flowOf(
      {
        type: 'router',
        name: 'route',
        mode: 'all',
        branches: [
          { name: 'has', when: when('exists'), steps: [codeStep('from_has', 'return 1;')] },
          { name: 'lacks', when: when('not_exists'), steps: [codeStep('from_lacks', 'return 2;')] },
          { name: 'blank', when: when('empty'), steps: [codeStep('from_blank', 'return 3;')] },
          {
            name: 'deep',
            when: [[{ left: '{{trigger.body.user.address.city}}', op: 'not_exists' }]],
            steps: [codeStep('from_deep', 'return 4;')],
          },
        ],
      },
      codeStep('after', 'return inputs;', { branches: '{{route.branches}}' }),
    );
    const { outcome } = await h.executor.execute(
      await h.job(flow, { ...mode, trigger: triggerWith({ total: 1 }) }),
    );
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byPath(outcome.steps, 'route/has')?.status).toBe('SKIPPED');
    expect(byPath(outcome.steps, 'after')?.output).toEqual({ branches: ['lacks', 'blank', 'deep'] });
  });

  it('loop: iterations in item order whatever the concurrency, {{each.item}} and {{each.index}}', async () => {
    const flow = flowOf(
      {
        type: 'loop',
        name: 'each',
        items: '{{trigger.body.items}}',
        concurrency: 4,
        steps: [
          // Later items finish first.
          codeStep(
            'wait',
            'await new Promise((r) => setTimeout(r, (10 - inputs.i) * 5)); return inputs.n * 2;',
            {
              n: '{{each.item}}',
              i: '{{each.index}}',
            },
          ),
          addStep('plus', '{{wait}}', '{{each.index}}'),
        ],
      },
      codeStep('after', 'return inputs.all.map((it) => [it.wait, it.plus.result]);', {
        all: '{{each.iterations}}',
      }),
    );
    const items = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10];
    const { outcome } = await h.executor.execute(
      await h.job(flow, { ...mode, trigger: triggerWith({ items }) }),
    );
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byPath(outcome.steps, 'after')?.output).toEqual(items.map((n, i) => [n * 2, n * 2 + i]));
    expect(byPath(outcome.steps, 'each[9]/plus')?.input).toEqual({ a: 20, b: 9 });
    expect(outcome.steps.filter((step) => step.path?.startsWith('each[')).length).toBe(20);
  });

  it('piece actions waiting on timers run at once, each to its end', async () => {
    const flow = flowOf({
      type: 'loop',
      name: 'each',
      items: [1, 2, 3, 4],
      concurrency: 4,
      steps: [pieceStep('nap', 'sleepy', 'nap')],
    });
    const job = await h.job(flow, mode);
    const { outcome } = await h.executor.execute({ ...job, pieces: [...job.pieces, sleepy] });
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byPath(outcome.steps, 'each')?.output).toEqual({
      iterations: [1, 2, 3, 4].map(() => ({ nap: 'rested' })),
    });
  });

  it("a run's code steps share the run's globals, and the next run starts without them", async () => {
    const flow = flowOf(
      codeStep('set', "globalThis.left = 'this run'; return 1;"),
      codeStep('read', 'return typeof globalThis.left;'),
    );
    const first = await h.executor.execute(await h.job(flow, mode));
    expect(byPath(first.outcome.steps, 'read')?.output).toBe('string');
    h.runIsolation.prepareNext();
    const next = await h.executor.execute(
      await h.job(flowOf(codeStep('read', 'return typeof globalThis.left;')), mode),
    );
    expect(byPath(next.outcome.steps, 'read')?.output).toBe('undefined');
  });

  it('nested loops keep their item and index apart', async () => {
    const job = await h.job(LOOP_NESTED, { ...mode, trigger: triggerWith({ rows: [[1, 2], [3]] }) });
    const { outcome } = await h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byPath(outcome.steps, 'outer[0]/inner[1]/cell')?.output).toEqual({ o: 0, i: 1, v: 2 });
    expect(byPath(outcome.steps, 'outer[1]/inner[0]/cell')?.output).toEqual({ o: 1, i: 0, v: 3 });
    expect(byPath(outcome.steps, 'cells')?.output).toEqual([[1, 2], [3]]);
  });

  it.each([
    ['loop100', BENCHMARK_LOOP_FLOW, { plus_one: { result: 100 }, add: { result: 199 } }],
    ['router', BENCHMARK_ROUTER_FLOW, { result: 6 }],
  ])('the benchmark %s flow answers', async (_name, flow, body) => {
    const { outcome } = await h.executor.execute(await h.job(flow, mode));
    expect(outcome.status).toBe('SUCCEEDED');
    const [response] = h.posts('response');
    expect(FlowResponseReportSchema.parse(response?.json).response.body).toEqual(body);
  });

  it('stop SUCCEEDED answers the caller with its response and runs nothing after it', async () => {
    const flow = flowOf(
      {
        type: 'stop',
        name: 'done',
        status: 'SUCCEEDED',
        response: { status: 201, body: { total: '{{trigger.body.total}}' } },
      },
      codeStep('never', 'return 1;'),
    );
    const { outcome } = await h.executor.execute(
      await h.job(flow, { ...mode, trigger: triggerWith({ total: 7 }) }),
    );
    expect(outcome.status).toBe('SUCCEEDED');
    expect(paths(outcome.steps)).toEqual(['trigger SUCCEEDED', 'done SUCCEEDED']);
    const [response] = h.posts('response');
    const report = FlowResponseReportSchema.parse(response?.json);
    expect(report.response).toEqual({ status: 201, headers: {}, body: { total: 7 } });
    expect(report.last).toBe(true);
  });

  it('stop FAILED inside a loop ends the run FLOW_STOPPED with its message; no later iteration starts', async () => {
    const flow = flowOf({
      type: 'loop',
      name: 'each',
      items: [1, 2, 3],
      concurrency: 1,
      steps: [
        {
          type: 'router',
          name: 'check',
          mode: 'first',
          branches: [
            {
              name: 'two',
              when: [[{ left: '{{each.item}}', op: 'eq', right: 2 }]],
              steps: [
                { type: 'stop', name: 'halt', status: 'FAILED', message: 'item {{each.index}} is two' },
              ],
            },
          ],
        },
      ],
    });
    const { outcome } = await h.executor.execute(await h.job(flow, mode));
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'FLOW_STOPPED', message: 'item 1 is two', step: 'halt' });
    expect(byPath(outcome.steps, 'each[1]/check/two/halt')?.status).toBe('SUCCEEDED');
    expect(outcome.steps.some((step) => step.path?.startsWith('each[2]'))).toBe(false);
  });
});
