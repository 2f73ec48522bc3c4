import { randomUUID } from 'node:crypto';
import {
  FlowboxError,
  httpStatusOf,
  type RunJobData,
  serializeError,
  TRACEPARENT_HEADER,
  type TriggerPayload,
  type WebhookVerify,
} from '@flowbox/protocol';
import { type Span, type Tracer, traced } from '@flowbox/tracing';
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import type { SigningSecrets } from '../connections/signing-secrets.ts';
import type { RefusedDeliveries } from '../deliveries/refused-deliveries.ts';
import type { FlowsRepository, PublishedFlow } from '../flows/flows-repository.ts';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import type { RunHandoff } from '../queue/run-handoff.ts';
import type { RunLifecycle } from '../runs/run-lifecycle.ts';
import type { RunSource } from '../runs/run-record.ts';
import type { NewIdempotencyKey } from '../runs/runs-repository.ts';
import { SCHEDULE_PIECE } from '../schedules/schedule-spec.ts';
import type { SyncResponseHub } from '../sync/sync-response-hub.ts';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import type { ErrorBody } from './error-handler.ts';
import {
  awaitRepeatAnswer,
  callerGoneSignal,
  checkRepeat,
  type IdempotencyDeps,
  idempotencyKeyOf,
  shareAnswer,
} from './idempotent-webhook.ts';
import { apiRoute } from './view-serializer.ts';
import { flowErrorResponse, RUN_ID_HEADER, sendFlowResponse, sendOutcome } from './webhook-answers.ts';
import { installWebhookBodyParser, type ReceivedWebhookBody, toTriggerPayload } from './webhook-body.ts';
import { noteRefusals } from './webhook-refusals.ts';
import { checkSignature, headerValues } from './webhook-signature.ts';

export { RUN_ID_HEADER } from './webhook-answers.ts';

export interface WebhookDeps extends IdempotencyDeps {
  flows: FlowsRepository;
  lifecycle: RunLifecycle;
  /** Where a run goes once accepted (a waiting worker, held, or the queue), and leaves unstarted. */
  handoff: RunHandoff;
  hub: SyncResponseHub;
  webhookTimeoutMs: number;
  /** Deepest nesting a webhook body may have (WEBHOOK_MAX_DEPTH). */
  maxBodyDepth: number;
  /** Null when tracing is off. */
  tracer: Tracer | null;
  signingSecrets: SigningSecrets;
  metrics: AppMetrics;
  /** WEBHOOK_RESPONSE_ALLOWED_HEADERS: restricted headers a flow's errorResponse may set. */
  allowedResponseHeaders: ReadonlySet<string>;
  /** Where webhooks refused before any run existed are noted (no I/O on the request's path). */
  refused: Pick<RefusedDeliveries, 'record'>;
}

interface WebhookRequest {
  Params: { flowId: string };
  Querystring: Record<string, string | string[]>;
  Body: unknown;
}

/**
 * POST takes any body (webhook-body.ts); GET takes the query string alone. In their own scope,
 * so that their body parser is theirs: the other routes keep JSON only.
 */
export function registerWebhookRoutes(app: FastifyInstance, deps: WebhookDeps): void {
  void app.register(async (scope) => {
    installWebhookBodyParser(scope, deps.maxBodyDepth);
    scope.addHook('onSend', noteRefusals(deps.refused, RUN_ID_HEADER));
    for (const method of ['POST', 'GET'] as const) {
      scope.route<WebhookRequest>({
        ...apiRoute(method === 'POST' ? OPS.triggerWebhookSync : OPS.triggerWebhookSyncGet),
        // A HEAD must not run the flow.
        exposeHeadRoute: false,
        onSend: guardAnswer,
        handler: (request, reply) => acceptRun(request, reply, deps, true),
      });
      scope.route<WebhookRequest>({
        ...apiRoute(method === 'POST' ? OPS.triggerWebhook : OPS.triggerWebhookGet),
        exposeHeadRoute: false,
        onSend: guardAnswer,
        handler: (request, reply) => acceptRun(request, reply, deps, false),
      });
    }
  });
}

const JSON_TYPE = /^application\/([\w.-]+\+)?json\s*(;|$)/i;

/**
 * Every webhook answer, a flow's own or flowbox's, is served so that a browser cannot run it on
 * the app's origin: never sniffed into HTML, and anything that is not JSON is sandboxed (no
 * script, no cookies, an opaque origin). A flow allowed to set these (WEBHOOK_RESPONSE_ALLOWED_HEADERS)
 * keeps its own.
 */
export const guardAnswer: onSendHookHandler = (_request, reply, payload, done) => {
  if (!reply.hasHeader('x-content-type-options')) reply.header('x-content-type-options', 'nosniff');
  const type = reply.getHeader('content-type');
  if (!(typeof type === 'string' && JSON_TYPE.test(type)) && !reply.hasHeader('content-security-policy'))
    reply.header('content-security-policy', 'sandbox');
  done(null, payload);
};

/**
 * With tracing on, the run's trace starts here (the root span, `webhook`), unless the caller
 * sent a traceparent: the run then joins the caller's trace, and is not traced if that says
 * not sampled.
 */
function acceptRun(
  request: FastifyRequest<WebhookRequest>,
  reply: FastifyReply,
  deps: WebhookDeps,
  sync: boolean,
): Promise<FastifyReply> {
  if (deps.tracer === null) return accept(request, reply, deps, sync, undefined);
  const caller = request.headers[TRACEPARENT_HEADER];
  const span = deps.tracer.startSpan('webhook', {
    parent: typeof caller === 'string' ? caller : undefined,
    kind: 'server',
    attributes: {
      'http.request.method': request.method,
      'http.route': request.routeOptions.url ?? '',
      'flowbox.flow_id': request.params.flowId,
    },
  });
  return traced(span, async () => {
    const answered = await accept(request, reply, deps, sync, span);
    span.setAttribute('http.response.status_code', reply.statusCode);
    // A run that failed (500) or is late (504) is answered, not thrown: the span still says so.
    if (reply.statusCode >= 500) span.fail({ message: `answered ${reply.statusCode}` });
    return answered;
  });
}

async function accept(
  request: FastifyRequest<WebhookRequest>,
  reply: FastifyReply,
  deps: WebhookDeps,
  sync: boolean,
  span: Span | undefined,
): Promise<FastifyReply> {
  const trigger = toTriggerPayload(request);
  const flow = await deps.flows.findPublished(request.params.flowId);
  if (flow === null || !flow.enabled) {
    throw new FlowboxError(
      'FLOW_NOT_FOUND',
      `flow ${request.params.flowId} does not exist or is not enabled`,
    );
  }
  if (flow.triggerPiece === SCHEDULE_PIECE || flow.triggerPolls) {
    throw new FlowboxError(
      'FLOW_NOT_WEBHOOK',
      `flow ${flow.flowId} starts ${flow.triggerPolls ? 'from the items its trigger polls' : 'on a schedule'}, not from its webhook; start a run by hand with POST /v1/flows/${flow.flowId}/runs`,
    );
  }
  // Before the run exists: a refused sender leaves no row, no job, and reaches no worker.
  if (flow.verify !== null) await verifySender(request, flow.verify, deps);
  const idempotency = idempotencyKeyOf(request, deps.idempotencyTtlHours);
  return startRun(request, reply, deps, { flow, trigger, sync, span, source: 'webhook', idempotency });
}

/** What starts a run of a published flow: its trigger payload and who asked. */
export interface RunStart {
  flow: PublishedFlow;
  trigger: TriggerPayload;
  sync: boolean;
  span: Span | undefined;
  source: RunSource;
  /** A webhook's `Idempotency-Key`: one run per flow and key. Null: every call starts a run. */
  idempotency: NewIdempotencyKey | null;
}

/**
 * Accepts a run of a checked flow and answers its caller: 202 with its id, or (sync) the flow's
 * response, its errorResponse for a failed run, or 204 when nothing answered. The webhooks and
 * the manual runs (`POST /v1/flows/:flowId/runs`) answer alike.
 */
export async function startRun(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: WebhookDeps,
  { flow, trigger, sync, span, source, idempotency }: RunStart,
): Promise<FastifyReply> {
  const runId = randomUUID();
  const syncInstanceId = sync ? deps.hub.instanceId : null;
  // The run's context travels with its job: every later span of the run descends from this one.
  const traceparent = span?.traceparent;
  // An idle worker, when one waits, is named in the row: the run starts as it is accepted.
  const reserved = deps.handoff.reserve();
  // The row holds all the job does (the reconciler enqueues it again should Redis lose it).
  let accepted: { rank: number } | null = null;
  try {
    const run = {
      id: runId,
      flowId: flow.flowId,
      flowVersionId: flow.flowVersionId,
      sync,
      trigger,
      syncInstanceId,
      traceparent,
      startedBy: reserved?.workerId,
      source,
    };
    if (idempotency === null) accepted = await deps.lifecycle.accept(run);
    else {
      // One run per flow and key: a repeat gets the key's run and its answer, never a new run.
      const created = await deps.lifecycle.acceptWithKey(run, idempotency);
      if (created.kind === 'existing') {
        checkRepeat(flow.flowId, idempotency, sync, created.key);
        return answerRepeat(reply, deps, flow.flowId, idempotency.key, created.key.runId, sync);
      }
      accepted = created.kind === 'created' ? { rank: created.rank } : null;
    }
  } finally {
    if (accepted === null) reserved?.putBack();
  }
  if (accepted === null) {
    const body: ErrorBody = {
      error: {
        code: 'FLOW_QUEUE_FULL',
        message: `flow ${flow.flowId} has as many runs waiting as it may; no run was created, try again shortly`,
      },
    };
    return reply.status(httpStatusOf(body.error.code)).header('retry-after', '1').send(body);
  }
  span?.setAttribute('flowbox.run_id', runId);
  reply.header(RUN_ID_HEADER, runId);

  const waiter = sync ? deps.hub.register(runId) : null;
  const job: RunJobData = {
    version: 1,
    type: 'run-flow',
    runId,
    flowId: flow.flowId,
    flowVersionId: flow.flowVersionId,
    trigger,
    syncInstanceId,
    acceptedAt: Date.now(),
  };
  if (traceparent !== undefined) job.traceparent = traceparent;
  const enqueue =
    traceparent === undefined
      ? undefined
      : deps.tracer?.startSpan('enqueue', { parent: traceparent, kind: 'producer' });
  try {
    const submitted = await deps.handoff.submit(job, accepted.rank, reserved);
    enqueue?.setAttribute('flowbox.enqueue.direct', submitted === 'handed');
    deps.metrics.runSubmitted(submitted);
  } catch (error) {
    waiter?.cancel();
    enqueue?.fail(serializeError(error));
    // The run was accepted, so it must end readable: record why it never ran. Its caller was
    // told 503 and may send it again, so it is not run later for nobody.
    await deps.lifecycle.failUnqueued({ id: runId, flowId: flow.flowId }, serializeError(error));
    throw error;
  } finally {
    enqueue?.end();
  }

  if (waiter === null) return reply.status(202).send({ runId });
  // The raw response closes before it is written only when the client went away.
  const left = callerGoneSignal(reply);
  const outcome = await waiter.wait(deps.webhookTimeoutMs, left.signal);
  left.done();
  if (idempotency !== null) await shareAnswer(deps, request, flow.flowId, idempotency.key, outcome);
  let dropped = false;
  if ((outcome.type === 'timeout' || outcome.type === 'caller-gone') && !flow.runWhenCallerGone) {
    dropped = await dropUnstarted(deps, request, runId, outcome.type);
  }
  if (outcome.type === 'run-ended' && outcome.error !== undefined && flow.errorResponse !== null) {
    const run = { id: runId, flowId: flow.flowId, status: outcome.status };
    const own = flowErrorResponse(flow.errorResponse, run, outcome.error, deps.allowedResponseHeaders);
    if (own.ok) return sendFlowResponse(reply, own.response);
    request.log.warn(
      { runId, problem: own.problem },
      "the flow's errorResponse cannot be sent; answered flowbox's error",
    );
  }
  return sendOutcome(reply, outcome, deps.webhookTimeoutMs, dropped);
}

/**
 * A repeat of a live idempotency key: 202 with the key's run (async), or the run's answer (sync:
 * as the first caller got it, or waited for as the first caller does; 504 with the run id past
 * WEBHOOK_TIMEOUT_SECONDS, the run left to go on).
 */
async function answerRepeat(
  reply: FastifyReply,
  deps: WebhookDeps,
  flowId: string,
  key: string,
  runId: string,
  sync: boolean,
): Promise<FastifyReply> {
  reply.header(RUN_ID_HEADER, runId);
  if (!sync) return reply.status(202).send({ runId });
  const left = callerGoneSignal(reply);
  try {
    const outcome = await awaitRepeatAnswer(deps, flowId, key, runId, deps.webhookTimeoutMs, left.signal);
    return sendOutcome(reply, outcome, deps.webhookTimeoutMs, false);
  } finally {
    left.done();
  }
}

/** WEBHOOK_SIGNATURE_INVALID (401) unless the request carries a good signature of its body. */
async function verifySender(
  request: FastifyRequest,
  verify: WebhookVerify,
  deps: WebhookDeps,
): Promise<void> {
  const secret = await deps.signingSecrets.get(verify.secret);
  // The bytes as sent (not rawBody: text that is not UTF-8 decodes with U+FFFD); none without a body.
  const body = (request.body as ReceivedWebhookBody | undefined)?.bytes ?? Buffer.alloc(0);
  const refused = checkSignature(
    verify,
    secret,
    { body, headerValues: headerValues(request.raw.rawHeaders, verify.header) },
    Math.floor(Date.now() / 1000),
  );
  if (refused === null) return;
  deps.metrics.signatureRefused(verify.scheme);
  throw new FlowboxError('WEBHOOK_SIGNATURE_INVALID', `the webhook's signature was refused: ${refused}`);
}

/**
 * A sync caller that left (answered 504, or disconnected) before its run started would get
 * nothing from it: the run ends `CALLER_GONE` instead of running for nobody, and its job leaves
 * the queue (a job that is being leased is refused at its start instead). True when it ended.
 */
async function dropUnstarted(
  deps: WebhookDeps,
  request: FastifyRequest,
  runId: string,
  why: 'timeout' | 'caller-gone',
): Promise<boolean> {
  try {
    const ended = await deps.lifecycle.callerGone(
      runId,
      why === 'timeout' ? 'was answered 504 (WEBHOOK_TIMEOUT)' : 'disconnected',
    );
    if (ended) await deps.handoff.drop(runId).catch(() => false);
    return ended;
  } catch (error) {
    request.log.warn({ err: error, runId }, 'could not end a run whose caller left');
    return false;
  }
}
