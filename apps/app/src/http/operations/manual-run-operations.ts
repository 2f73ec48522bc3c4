import { z } from 'zod';
import { EXAMPLE_IDS, errorExample } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import { FlowParams } from '../views/flow-requests.ts';
import { RunAcceptedView } from '../views/run-view.ts';
import { errors } from './responses.ts';

const ManualRunPayload = z.record(z.string(), z.unknown()).meta({
  id: 'ManualRunPayload',
  description:
    "The trigger's body: templates read it as `{{trigger.x}}`. A schedule flow's trigger outputs it with `scheduledAt` and `firedAt` (the payload's, to replay a tick, else the moment the run started).",
});

const NOTE =
  "Any published flow, whatever its trigger (a schedule's too), enabled or not. The run's `source` is `manual`. An `Idempotency-Key` header is not read here (it is the webhooks'): each call starts a run.";

/** Runs started by hand (behind the API key). */
export const MANUAL_RUN_OPERATIONS = {
  startFlowRun: {
    operationId: 'startFlowRun',
    method: 'POST',
    url: '/v1/flows/:flowId/runs',
    tag: 'runs',
    summary:
      "Starts a run of the flow's published version with this payload, and answers at once with its id.",
    description: NOTE,
    auth: 'apiKey',
    params: FlowParams,
    body: ManualRunPayload,
    responses: {
      202: { description: 'Accepted.', view: RunAcceptedView },
      ...errors(400, 401, 404, 429, 503),
    },
    example: { request: { orderId: 'A-1001' }, status: 202, response: { runId: EXAMPLE_IDS.RUN_ID } },
  },
  startFlowRunSync: {
    operationId: 'startFlowRunSync',
    method: 'POST',
    url: '/v1/flows/:flowId/runs/sync',
    tag: 'runs',
    summary: "Runs the flow's published version with this payload and answers as its sync webhook does.",
    description: `${NOTE} The answer is the flow's response step's; for a failed run the flow's \`errorResponse\` when it has one, else the run's error with its id; 204 when the run succeeded and no step answered; 504 past WEBHOOK_TIMEOUT_SECONDS (the run goes on).`,
    auth: 'apiKey',
    params: FlowParams,
    body: ManualRunPayload,
    passThrough: true,
    responses: {
      200: {
        description:
          "The flow's own response (its status, headers and body), or its `errorResponse` for a failed run.",
      },
      204: {
        description: 'The run succeeded but no step answered: no body; `x-flowbox-run-id` names the run.',
      },
      ...errors(400, 401, 404, 429, 500, 502, 503, 504),
    },
    example: {
      request: { orderId: 'A-1001' },
      status: 404,
      response: errorExample('FLOW_NOT_FOUND', 'flow orders does not exist or has no published version'),
    },
  },
} as const satisfies Record<string, ApiOperation>;
