import { FlowboxError, type TriggerPayload } from '@flowbox/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';
import { guardAnswer, startRun, type WebhookDeps } from './webhook-routes.ts';

type ManualRunRequest = { Params: { flowId: string }; Body: unknown };

/**
 * Runs by hand: `POST /v1/flows/:flowId/runs` (202 with the run's id) and `…/runs/sync` (the
 * flow's answer), with a JSON object as the trigger's body. Any published flow, whatever its
 * trigger (a schedule's too) and whether enabled: disabling closes the public webhook, not the
 * API. The run records `manual` as what started it. An `Idempotency-Key` header is not read:
 * each call starts a run. Behind the API key.
 */
export function registerManualRunRoutes(app: FastifyInstance, deps: WebhookDeps): void {
  app.route<ManualRunRequest>({
    ...apiRoute(OPS.startFlowRun),
    handler: (request, reply) => startManualRun(request, reply, deps, false),
  });
  app.route<ManualRunRequest>({
    ...apiRoute(OPS.startFlowRunSync),
    // The flow's own answer, served as a webhook's is: never run as a page on this origin.
    onSend: guardAnswer,
    handler: (request, reply) => startManualRun(request, reply, deps, true),
  });
}

async function startManualRun(
  request: FastifyRequest<ManualRunRequest>,
  reply: FastifyReply,
  deps: WebhookDeps,
  sync: boolean,
): Promise<FastifyReply> {
  const body = request.body ?? {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new FlowboxError('INVALID_REQUEST', "body: a manual run's payload is a JSON object");
  }
  const flow = await deps.flows.findPublished(request.params.flowId);
  if (flow === null) {
    throw new FlowboxError(
      'FLOW_NOT_FOUND',
      `flow ${request.params.flowId} does not exist or has no published version`,
    );
  }
  const trigger: TriggerPayload = {
    method: 'POST',
    headers: {},
    query: {},
    body: body as Record<string, unknown>,
    rawBody: JSON.stringify(body),
    rawBodyEncoding: 'utf8',
  };
  return startRun(request, reply, deps, {
    flow,
    trigger,
    sync,
    span: undefined,
    source: 'manual',
    // Idempotency-Key is a webhook's: a manual run is asked for by someone who sees its answer.
    idempotency: null,
  });
}
