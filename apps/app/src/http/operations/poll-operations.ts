import type { ApiOperation } from '../api-operation.ts';
import { FlowParams } from '../views/flow-requests.ts';
import { FlowPollView } from '../views/flow-view.ts';
import { errors } from './responses.ts';

/** A polling flow's polls (behind the API key). */
export const POLL_OPERATIONS = {
  getFlowPoll: {
    operationId: 'getFlowPoll',
    method: 'GET',
    url: '/v1/flows/:flowId/poll',
    tag: 'flows',
    summary: "A polling flow's polls: the baseline, counts, whether one is in flight, and the last failure.",
    description:
      "404 FLOW_NOT_FOUND for a flow that does not exist or whose published version's trigger does not poll.",
    auth: 'apiKey',
    params: FlowParams,
    responses: { 200: { description: 'Its polls.', view: FlowPollView }, ...errors(401, 404) },
    example: {
      status: 200,
      response: {
        flowId: 'new-orders',
        flowVersionId: 'v-3f2a',
        trigger: 'http.new_items',
        intervalSeconds: 60,
        startFrom: 'new',
        baselineAt: '2026-11-25T08:00:00.000Z',
        lastPolledAt: '2026-11-25T09:00:00.512Z',
        polling: false,
        polls: 61,
        itemsFound: 12,
        failures: 1,
        lastError: { code: 'POLL_FAILED', message: 'GET https://shop.example answered 503' },
        lastErrorAt: '2026-11-25T09:00:00.512Z',
      },
    },
  },
} as const satisfies Record<string, ApiOperation>;
