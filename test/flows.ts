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

/**
 * A flow that calls a piece's `greet` action with the trigger's `who` and answers with its
 * output: the shape the piece-registry tests publish their test pieces under.
 */
export function greetingFlow(piece: string, version?: string): FlowDefinition {
  return {
    trigger: { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} },
    steps: [
      {
        type: 'piece',
        name: 'greet',
        piece,
        ...(version === undefined ? {} : { version }),
        action: 'greet',
        input: { who: '{{trigger.who}}' },
      },
      {
        type: 'piece',
        name: 'respond',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: '{{greet}}' },
      },
    ],
  };
}
