import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { deliveryHeaders } from '../deliveries/delivery-headers.ts';
import type { SyncResponseHub } from '../sync/sync-response-hub.ts';
import { answerWait, type WaitAnswerDeps, type WaitRoute } from '../waits/wait-answer.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { callerGoneSignal } from './idempotent-webhook.ts';
import { apiRoute } from './view-serializer.ts';
import { RUN_ID_HEADER, sendOutcome } from './webhook-answers.ts';
import { installWebhookBodyParser, toTriggerPayload } from './webhook-body.ts';
import { guardAnswer } from './webhook-routes.ts';

export interface WaitRouteDeps extends WaitAnswerDeps {
  hub: SyncResponseHub;
  webhookTimeoutMs: number;
  maxBodyDepth: number;
}

interface WaitRequest {
  Params: { runId: string; path: string; token: string };
  Querystring: Record<string, string | string[]>;
  Body: unknown;
}

const OPERATIONS = {
  resume: [OPS.resumeWait, OPS.resumeWaitGet],
  sync: [OPS.syncWait, OPS.syncWaitGet],
  approve: [OPS.approveWait, OPS.approveWaitGet],
  reject: [OPS.rejectWait, OPS.rejectWaitGet],
} as const;

/**
 * The wait URLs (waits/wait-answer.ts decides): GET for a link clicked in an email or a chat,
 * POST for a caller with a body, which is parsed as a webhook's. In their own scope, for the
 * webhooks' body parser and their answers' guard.
 */
export function registerWaitRoutes(app: FastifyInstance, deps: WaitRouteDeps): void {
  void app.register(async (scope) => {
    installWebhookBodyParser(scope, deps.maxBodyDepth);
    for (const [route, operations] of Object.entries(OPERATIONS) as Array<
      [WaitRoute, typeof OPERATIONS.resume]
    >) {
      for (const operation of operations) {
        scope.route<WaitRequest>({
          ...apiRoute(operation),
          exposeHeadRoute: false,
          onSend: guardAnswer,
          handler: (request, reply) => answer(request, reply, deps, route),
        });
      }
    }
  });
}

async function answer(
  request: FastifyRequest<WaitRequest>,
  reply: FastifyReply,
  deps: WaitRouteDeps,
  route: WaitRoute,
): Promise<FastifyReply> {
  const { runId, path, token } = request.params;
  const { method, body, query } = toTriggerPayload(request);
  const call = {
    runId,
    path,
    token,
    route,
    request: { method, body, query, headers: deliveryHeaders(request.headers) },
  };
  if (route !== 'sync') {
    await answerWait(deps, call);
    return reply.status(202).header(RUN_ID_HEADER, runId).send({ runId, resumed: true });
  }
  // Listening before the run resumes, so its answer cannot come before anyone waits for it.
  const waiter = deps.hub.register(runId);
  try {
    await answerWait(deps, { ...call, syncInstanceId: deps.hub.instanceId });
  } catch (error) {
    waiter.cancel();
    throw error;
  }
  reply.header(RUN_ID_HEADER, runId);
  const left = callerGoneSignal(reply);
  const outcome = await waiter.wait(deps.webhookTimeoutMs, left.signal);
  left.done();
  return sendOutcome(reply, outcome, deps.webhookTimeoutMs, false);
}
