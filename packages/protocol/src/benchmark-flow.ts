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
