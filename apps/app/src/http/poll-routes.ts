import { FlowboxError } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { FlowsRepository } from '../flows/flows-repository.ts';
import { parsePollSpec } from '../polls/poll-spec.ts';
import type { PollsRepository } from '../polls/polls-repository.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import type { FlowPollView } from './views/flow-view.ts';

/** `GET /v1/flows/:flowId/poll`: what the inspector shows of a polling flow. */
export function registerPollRoutes(
  app: FastifyInstance,
  deps: { flows: FlowsRepository; polls: PollsRepository },
): void {
  app.route<{ Params: { flowId: string } }>({
    ...apiRoute(OPS.getFlowPoll),
    handler: async (request): Promise<FlowPollView> => {
      const { flowId } = request.params;
      const flow = await deps.flows.getFlow(flowId);
      const status =
        flow?.publishedVersionId == null ? null : await deps.polls.status(flow.publishedVersionId);
      if (flow?.trigger == null || flow.publishedVersionId == null || status === null) {
        throw new FlowboxError(
          'FLOW_NOT_FOUND',
          `flow ${flowId} does not exist or has no published polling trigger that polled`,
        );
      }
      // Published, so checked already: no floor again.
      const spec = parsePollSpec(flow.trigger.input, { minIntervalSeconds: 0 });
      const iso = (at: Date | null) => (at === null ? null : at.toISOString());
      return {
        flowId,
        flowVersionId: flow.publishedVersionId,
        trigger: `${flow.trigger.piece}.${flow.trigger.trigger}`,
        intervalSeconds: spec.intervalSeconds,
        startFrom: spec.startFrom,
        baselineAt: iso(status.baselineAt),
        lastPolledAt: iso(status.lastPolledAt),
        polling: status.polling,
        polls: status.polls,
        itemsFound: status.itemsFound,
        failures: status.failures,
        lastError:
          status.lastError === null
            ? null
            : { code: status.lastError.code, message: status.lastError.message },
        lastErrorAt: iso(status.lastErrorAt),
      };
    },
  });
}
