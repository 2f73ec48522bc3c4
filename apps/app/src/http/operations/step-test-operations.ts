import type { ApiOperation } from '../api-operation.ts';
import { StepTestBody, StepTestParams, StepTestView } from '../views/step-test-view.ts';
import { errors } from './responses.ts';

/** Testing one step of a flow (behind the API key). */
export const STEP_TEST_OPERATIONS = {
  testFlowStep: {
    operationId: 'testFlowStep',
    method: 'POST',
    url: '/v1/flows/:flowId/steps/:stepName/test',
    tag: 'flows',
    summary: 'Runs one piece or code step alone on a worker, over sample outputs of the steps before it.',
    description:
      "The step runs as in a run (the worker's execution mode, isolation and egress policy; the version's connections, redacted in the answer) but alone: no run is recorded and it is tried once. A step in a router's branch or a loop's body is named as any other. 404 FLOW_NOT_FOUND, FLOW_VERSION_NOT_FOUND, or STEP_NOT_FOUND (naming the flow's steps); 400 STEP_NOT_TESTABLE for the trigger, a router, loop, stop, delay, wait or flow step; 504 STEP_TEST_TIMEOUT when no worker answered within WEBHOOK_TIMEOUT_SECONDS. A step that fails is answered 200 with `status: FAILED`.",
    auth: 'apiKey',
    params: StepTestParams,
    body: StepTestBody,
    bodyOptional: true,
    responses: {
      200: { description: "The step's output or error.", view: StepTestView },
      ...errors(400, 401, 404, 503, 504),
    },
    example: {
      request: { data: { trigger: { body: { orderId: 'A-1001', amount: 42 } } } },
      status: 200,
      response: { status: 'SUCCEEDED', output: { total: 42 }, logs: [], durationMs: 3.2 },
    },
  },
} as const satisfies Record<string, ApiOperation>;
