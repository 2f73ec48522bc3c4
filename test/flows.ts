import type { FlowDefinition } from '../packages/protocol/src/index.ts';

/**
 * A flow that answers its caller, then loops in a code step until the step timeout: a run
 * still in flight after its caller has its answer (the end-to-end tests and the compose check).
 */
export const ANSWERS_THEN_WORKS: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
  steps: [
    { type: 'code', name: 'step_1', code: 'return { n: 1 };', input: {} },
    {
      type: 'piece',
      name: 'step_2',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: '{{step_1}}' },
    },
    { type: 'code', name: 'step_3', code: 'while (true) {}', input: {} },
  ],
};
