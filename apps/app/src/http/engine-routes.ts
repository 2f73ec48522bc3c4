import {
  FlowboxError,
  FlowResponseReportSchema,
  parseMessage,
  StepReportSchema,
  TRACEPARENT_HEADER,
} from '@flowbox/protocol';
import { type Tracer, traced } from '@flowbox/tracing';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { EndedRuns } from '../runs/ended-runs.ts';
import type { RunProgressStore } from '../runs/run-progress-store.ts';
import type { SyncResponseHub } from '../sync/sync-response-hub.ts';
import type { EngineTokenClaims, TokenService } from '../tokens.ts';
import { responsePolicyProblem } from './response-header-policy.ts';

export interface EngineRouteDeps {
  ended: EndedRuns;
  progress: RunProgressStore;
  hub: SyncResponseHub;
  tokens: TokenService;
  /** Largest callback body: the steps a report carries are bounded by the run log's limit. */
  bodyLimit: number;
  /** Null when tracing is off. */
  tracer: Tracer | null;
  /** Restricted response headers flows may set anyway (WEBHOOK_RESPONSE_ALLOWED_HEADERS). */
  allowedResponseHeaders: ReadonlySet<string>;
}

interface EngineRequest {
  Params: { runId: string };
  Body: unknown;
}

type CallbackHandler = (
  request: FastifyRequest<EngineRequest>,
  reply: FastifyReply,
  claims: EngineTokenClaims,
) => Promise<FastifyReply>;

/**
 * The engine callback API. Every call carries a JWT scoped to one run; a token for another run,
 * an expired or tampered one, or one whose run has ended is refused before anything is kept.
 * Nothing here writes to Postgres: progress and the response go to Redis (RunProgressStore); the
 * run's record is written once, from the worker's result.
 */
export function registerEngineRoutes(app: FastifyInstance, deps: EngineRouteDeps): void {
  const authorize = (request: FastifyRequest<EngineRequest>): EngineTokenClaims => {
    const header = request.headers.authorization;
    if (header === undefined || !header.startsWith('Bearer ')) {
      throw new FlowboxError('UNAUTHORIZED', 'missing engine token');
    }
    const claims = deps.tokens.verifyEngineToken(header.slice('Bearer '.length));
    if (claims.runId !== request.params.runId) {
      throw new FlowboxError('FORBIDDEN', 'the engine token is for another run');
    }
    if (deps.ended.hasEnded(claims.runId)) throw alreadyFinished(claims.runId);
    return claims;
  };

  /**
   * Authorizes, then handles. A traced run's callback (its `traceparent` header names the engine
   * span it was sent from) gets a `callback <name>` span; only once its token is good, so a
   * stranger's request adds nothing to anyone's trace.
   */
  const callback =
    (name: string, handle: CallbackHandler) =>
    async (request: FastifyRequest<EngineRequest>, reply: FastifyReply): Promise<FastifyReply> => {
      const claims = authorize(request);
      const parent = deps.tracer === null ? undefined : request.headers[TRACEPARENT_HEADER];
      if (deps.tracer === null || typeof parent !== 'string') return handle(request, reply, claims);
      const span = deps.tracer.startSpan(`callback ${name}`, {
        parent,
        kind: 'server',
        attributes: { 'http.request.method': 'POST', 'flowbox.run_id': claims.runId },
      });
      return traced(span, async () => {
        const answered = await handle(request, reply, claims);
        span.setAttribute('http.response.status_code', reply.statusCode);
        return answered;
      });
    };

  app.post<EngineRequest>(
    '/v1/engine/runs/:runId/steps',
    { bodyLimit: deps.bodyLimit },
    callback('steps', async (request, reply, claims) => {
      const report = parseBody(StepReportSchema, request.body);
      await recordProgress(request, deps.progress, claims.runId, report.steps);
      return reply.status(204).send();
    }),
  );

  app.post<EngineRequest>(
    '/v1/engine/runs/:runId/response',
    { bodyLimit: deps.bodyLimit },
    callback('response', async (request, reply, claims) => {
      const report = parseBody(FlowResponseReportSchema, request.body);
      // Any piece may call `respond`: what reaches the caller is checked here, whoever built it.
      const problem = responsePolicyProblem(report.response, deps.allowedResponseHeaders);
      if (problem !== null) {
        await recordProgress(request, deps.progress, claims.runId, report.steps);
        throw new FlowboxError('INVALID_RESPONSE', `the response cannot be sent: ${problem}`);
      }
      // Kept before the caller is answered, so a GET right after the answer shows it.
      await recordProgress(request, deps.progress, claims.runId, report.steps, report.response);
      if (claims.syncInstanceId !== null) {
        await deps.hub.publish(claims.syncInstanceId, {
          version: 1,
          type: 'flow-response',
          runId: claims.runId,
          response: report.response,
        });
      }
      return reply.status(204).send();
    }),
  );
}

/**
 * Progress is a view, not the record: with Redis down the run goes on (its result is stored from
 * the worker's result) and only the live view misses these steps.
 */
async function recordProgress(
  request: FastifyRequest,
  progress: RunProgressStore,
  ...args: Parameters<RunProgressStore['record']>
): Promise<void> {
  try {
    await progress.record(...args);
  } catch (error) {
    request.log.warn({ err: error, runId: args[0] }, "could not keep a run's progress in Redis");
  }
}

function parseBody<S extends z.ZodType>(schema: S, body: unknown): z.infer<S> {
  const parsed = parseMessage(schema, body);
  if (!parsed.ok) throw new FlowboxError('INVALID_REQUEST', parsed.error);
  return parsed.value;
}

function alreadyFinished(runId: string): FlowboxError {
  return new FlowboxError('RUN_ALREADY_FINISHED', `run ${runId} has already finished`);
}
