import type { ApiOperation } from '../api-operation.ts';
import { FlowParams } from '../views/flow-requests.ts';
import { FlowScheduleView } from '../views/flow-view.ts';
import { errors } from './responses.ts';

/** A schedule flow's ticks (behind the API key). */
export const SCHEDULE_OPERATIONS = {
  getFlowSchedule: {
    operationId: 'getFlowSchedule',
    method: 'GET',
    url: '/v1/flows/:flowId/schedule',
    tag: 'flows',
    summary: "A schedule flow's next ticks and the latest ticks it skipped or missed.",
    description:
      "404 FLOW_NOT_FOUND for a flow that does not exist or whose published version's trigger is not a schedule.",
    auth: 'apiKey',
    params: FlowParams,
    responses: { 200: { description: 'Its ticks.', view: FlowScheduleView }, ...errors(401, 404) },
    example: {
      status: 200,
      response: {
        flowId: 'nightly',
        trigger: 'cron',
        catchUp: 'none',
        overlap: 'skip',
        nextTicks: ['2026-11-26T08:00:00.000Z', '2026-11-27T08:00:00.000Z'],
        passedTicks: [
          { scheduledAt: '2026-11-25T08:00:00.000Z', outcome: 'skipped', reason: 'overlap', missed: 0 },
        ],
      },
    },
  },
} as const satisfies Record<string, ApiOperation>;
