import { FlowboxError } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { FlowsRepository } from '../flows/flows-repository.ts';
import { nextTicks, parseScheduleSpec, SCHEDULE_PIECE } from '../schedules/schedule-spec.ts';
import type { SchedulesRepository } from '../schedules/schedules-repository.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import type { FlowScheduleView } from './views/flow-view.ts';

/** Ticks shown of each kind. */
const SHOWN = 5;

/** `GET /v1/flows/:flowId/schedule`: what the inspector shows of a schedule flow. */
export function registerScheduleRoutes(
  app: FastifyInstance,
  deps: { flows: FlowsRepository; schedules: SchedulesRepository },
): void {
  app.route<{ Params: { flowId: string } }>({
    ...apiRoute(OPS.getFlowSchedule),
    handler: async (request): Promise<FlowScheduleView> => {
      const { flowId } = request.params;
      const flow = await deps.flows.getFlow(flowId);
      if (flow?.trigger == null || flow.trigger.piece !== SCHEDULE_PIECE) {
        throw new FlowboxError(
          'FLOW_NOT_FOUND',
          `flow ${flowId} does not exist or has no published schedule`,
        );
      }
      // Published, so checked already: no floor again.
      const spec = parseScheduleSpec(flow.trigger, { minIntervalSeconds: 0 });
      const passed = await deps.schedules.passedTicks(flowId, SHOWN);
      return {
        flowId,
        trigger: spec.kind,
        catchUp: spec.catchUp,
        overlap: spec.overlap,
        nextTicks: nextTicks(spec, new Date(), SHOWN).map((at) => at.toISOString()),
        passedTicks: passed.map((tick) => ({ ...tick, scheduledAt: tick.scheduledAt.toISOString() })),
      };
    },
  });
}
