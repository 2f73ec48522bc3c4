import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifyInstance } from 'fastify';
import type { StepTests } from '../step-tests/step-tests.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import { StepTestBody } from './views/step-test-view.ts';

type StepTestRequest = { Params: { flowId: string; stepName: string }; Body: unknown };

/** `POST /v1/flows/:flowId/steps/:stepName/test`: one step alone on a worker (StepTests). */
export function registerStepTestRoutes(app: FastifyInstance, deps: { stepTests: StepTests }): void {
  app.route<StepTestRequest>({
    ...apiRoute(OPS.testFlowStep),
    handler: async (request) => {
      const parsed = StepTestBody.safeParse(request.body ?? {});
      if (!parsed.success) throw new FlowboxError('INVALID_REQUEST', formatIssues(parsed.error.issues));
      const { flowId, stepName } = request.params;
      return deps.stepTests.run(flowId, { step: stepName, data: parsed.data.data }, parsed.data.version);
    },
  });
}
