import type { FlowDefinition } from './flow.ts';

/**
 * The flow every flowbox seeds at first start and every benchmark calls: webhook trigger →
 * math helper (2 + 3) → code step (+1) → webhook response, answering `{"result":6}`. Its ids
 * are stable so the printed `curl` works on every machine.
 */
export const BENCHMARK_FLOW_ID = 'benchmark';

export const BENCHMARK_FLOW: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    { type: 'piece', name: 'step_1', piece: 'math-helper', action: 'addition_math', input: { a: 2, b: 3 } },
    {
      type: 'code',
      name: 'step_2',
      code: 'return { result: Number(inputs.sum) + 1 };',
      input: { sum: '{{step_1.result}}' },
    },
    {
      type: 'piece',
      name: 'step_3',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{step_2}}' },
    },
  ],
};

/**
 * `loop100` scenarios (benchmark/README.md): a loop over 100 items with a code step and a math
 * step each, answering the last iteration's outputs. What an iteration costs beside a run.
 */
export const BENCHMARK_LOOP_FLOW_ID = 'benchmark-loop100';

export const BENCHMARK_LOOP_FLOW: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    {
      type: 'loop',
      name: 'each',
      items: Array.from({ length: 100 }, (_, index) => index),
      concurrency: 1,
      steps: [
        {
          type: 'code',
          name: 'plus_one',
          code: 'return { result: inputs.n + 1 };',
          input: { n: '{{each.item}}' },
        },
        {
          type: 'piece',
          name: 'add',
          piece: 'math-helper',
          action: 'addition_math',
          input: { a: '{{plus_one.result}}', b: '{{each.index}}' },
        },
      ],
    },
    {
      type: 'piece',
      name: 'respond',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{each.iterations.99}}' },
    },
  ],
};

/**
 * `router` scenarios: a router of four branches (the last holds for the benchmark's POST) in
 * front of the benchmark flow's steps, answering `{"result":6}`. What a router costs a run.
 */
export const BENCHMARK_ROUTER_FLOW_ID = 'benchmark-router';

const methodBranch = (method: string) => ({
  name: method.toLowerCase(),
  when: [[{ left: '{{trigger.method}}', op: 'eq' as const, right: method }]],
  steps: [],
});

export const BENCHMARK_ROUTER_FLOW: FlowDefinition = {
  trigger: BENCHMARK_FLOW.trigger,
  steps: [
    {
      type: 'router',
      name: 'route',
      mode: 'first',
      branches: ['GET', 'PUT', 'DELETE', 'POST'].map(methodBranch),
    },
    ...BENCHMARK_FLOW.steps,
  ],
};

/**
 * The durable-run scenarios' flows: a code step, a delay, a code step and a response. The
 * first code step's output crosses the pause (the second reads it), so a resume must replay it.
 */
function delayedFlow(delay: string | null): FlowDefinition {
  return {
    trigger: BENCHMARK_FLOW.trigger,
    steps: [
      { type: 'code', name: 'before', code: 'return { n: 5 };', input: {} },
      ...(delay === null ? [] : [{ type: 'delay' as const, name: 'later', for: delay }]),
      {
        type: 'code',
        name: 'after',
        code: 'return { result: Number(inputs.n) + 1 };',
        input: { n: '{{before.n}}' },
      },
      {
        type: 'piece',
        name: 'respond',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: '{{after}}' },
      },
    ],
  };
}

/** `pause<n>` scenarios: each sync request pauses 5 s in the middle of its run (PAUSE_MIN_MS below it). */
export const BENCHMARK_PAUSE_FLOW_ID = 'benchmark-pause5s';
export const BENCHMARK_PAUSE_FLOW: FlowDefinition = delayedFlow('5s');

/** `delay` scenarios: one pause and one resume per run (1.1 s, over the default PAUSE_MIN_MS of 1 s). */
export const BENCHMARK_DELAY_FLOW_ID = 'benchmark-delay1100ms';
export const BENCHMARK_DELAY_FLOW: FlowDefinition = delayedFlow('1100ms');

/** `nodelay` scenarios: the `delay` flow without its delay, what a resume is compared with. */
export const BENCHMARK_NODELAY_FLOW_ID = 'benchmark-nodelay';
export const BENCHMARK_NODELAY_FLOW: FlowDefinition = delayedFlow(null);

/** The paused-runs idle measurement: runs that pause for an hour and are left paused. */
export const BENCHMARK_PAUSE_HOUR_FLOW_ID = 'benchmark-pause1h';
export const BENCHMARK_PAUSE_HOUR_FLOW: FlowDefinition = delayedFlow('1h');

/** Every flow the app seeds (SEED_BENCHMARK_FLOW), by id, with what it is for. */
export const BENCHMARK_FLOWS: readonly { id: string; name: string; definition: FlowDefinition }[] = [
  {
    id: BENCHMARK_FLOW_ID,
    name: 'Benchmark: sync webhook, math helper, code step, response',
    definition: BENCHMARK_FLOW,
  },
  {
    id: BENCHMARK_LOOP_FLOW_ID,
    name: 'Benchmark: a loop over 100 items, a code step and a math step each',
    definition: BENCHMARK_LOOP_FLOW,
  },
  {
    id: BENCHMARK_ROUTER_FLOW_ID,
    name: 'Benchmark: a router of four branches, then the benchmark flow',
    definition: BENCHMARK_ROUTER_FLOW,
  },
  {
    id: BENCHMARK_PAUSE_FLOW_ID,
    name: 'Benchmark: code step, 5 s delay (the run pauses), code step, response',
    definition: BENCHMARK_PAUSE_FLOW,
  },
  {
    id: BENCHMARK_DELAY_FLOW_ID,
    name: 'Benchmark: code step, 1.1 s delay (the run pauses), code step, response',
    definition: BENCHMARK_DELAY_FLOW,
  },
  {
    id: BENCHMARK_NODELAY_FLOW_ID,
    name: 'Benchmark: the 1.1 s delay flow without its delay',
    definition: BENCHMARK_NODELAY_FLOW,
  },
  {
    id: BENCHMARK_PAUSE_HOUR_FLOW_ID,
    name: 'Benchmark: code step, 1 h delay (the run pauses), code step, response',
    definition: BENCHMARK_PAUSE_HOUR_FLOW,
  },
];
