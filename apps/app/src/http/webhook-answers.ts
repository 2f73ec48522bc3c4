import {
  type ErrorResponse,
  FlowboxError,
  type FlowResponse,
  httpStatusOf,
  type SerializedError,
} from '@flowbox/protocol';
import type { FastifyReply } from 'fastify';
import type { SyncOutcome } from '../sync/sync-response-hub.ts';
import type { ErrorBody } from './error-handler.ts';
import { errorResponseScope, renderErrorResponse } from './error-response.ts';
import { responsePolicyProblem } from './response-header-policy.ts';

/**
 * What a webhook's caller is sent: the flow's response, its errorResponse, or flowbox's answer
 * for how the run ended (webhook-routes.ts and manual runs decide when).
 */

export const RUN_ID_HEADER = 'x-flowbox-run-id';

/** Headers a flow may not set on its response: they describe the connection, not the content. */
const HOP_BY_HOP = new Set([
  'connection',
  'content-length',
  'keep-alive',
  'transfer-encoding',
  'upgrade',
  'te',
]);

/**
 * The flow's errorResponse for a failed run, rendered over its error and held to the rules of
 * a response step's answer (response-header-policy.ts); the run keeps the full error.
 */
export function flowErrorResponse(
  template: ErrorResponse,
  run: { id: string; flowId: string; status: string },
  error: SerializedError,
  allowed: ReadonlySet<string>,
): { ok: true; response: FlowResponse } | { ok: false; problem: string } {
  const response = renderErrorResponse(template, errorResponseScope(run, error));
  const problem = responsePolicyProblem(response, allowed);
  return problem === null ? { ok: true, response } : { ok: false, problem };
}

export function sendFlowResponse(reply: FastifyReply, response: FlowResponse): FastifyReply {
  const { status, headers, body } = response;
  for (const [name, value] of Object.entries(headers)) {
    if (!HOP_BY_HOP.has(name.toLowerCase()) && name.toLowerCase() !== RUN_ID_HEADER)
      reply.header(name, value);
  }
  return reply.status(status).send(flowPayload(body, reply.getHeader('content-type')));
}

/**
 * A flow's body as fastify can send it. Fastify serialises a value only under a JSON content type
 * (or none) and refuses any other value that is not text: under another declared type (a flow
 * answering `text/html` with an object, a number), the value goes as its JSON text, with the
 * content type the flow declared.
 */
export function flowPayload(body: unknown, contentType: unknown): unknown {
  if (body === undefined) return '';
  if (body === null || typeof body === 'string' || typeof contentType !== 'string') return body;
  const mediaType = contentType.split(';')[0] ?? '';
  return mediaType.toLowerCase().includes('json') ? body : JSON.stringify(body);
}

export function sendOutcome(
  reply: FastifyReply,
  outcome: SyncOutcome,
  timeoutMs: number,
  dropped: boolean,
): FastifyReply {
  switch (outcome.type) {
    case 'flow-response':
      return sendFlowResponse(reply, outcome.response);
    case 'run-ended': {
      // No step answered a run that succeeded: nothing to say but that it ran (its id is a header).
      if (outcome.status === 'SUCCEEDED' && outcome.error === undefined) return reply.status(204).send();
      const error = outcome.error ?? {
        code: 'INTERNAL' as const,
        message: `the run ended ${outcome.status} without a response`,
      };
      const body: ErrorBody & { status: string; step?: string } = {
        error: { code: error.code, message: error.message },
        runId: outcome.runId,
        status: outcome.status,
      };
      if (outcome.error?.step !== undefined) body.step = outcome.error.step;
      return reply.status(httpStatusOf(error.code)).send(body);
    }
    case 'timeout': {
      const body: ErrorBody = {
        error: {
          code: 'WEBHOOK_TIMEOUT',
          message: dropped
            ? `the run did not start within ${timeoutMs / 1000}s; it will not run (CALLER_GONE) and stays readable`
            : `the flow did not answer within ${timeoutMs / 1000}s; the run goes on and stays readable`,
        },
        runId: outcome.runId,
      };
      return reply.status(httpStatusOf(body.error.code)).send(body);
    }
    case 'caller-gone': {
      // Nobody reads this: the connection is gone. Sent so the request ends like any other.
      const body: ErrorBody = {
        error: { code: 'CALLER_GONE', message: 'the caller disconnected' },
        runId: outcome.runId,
      };
      return reply.status(httpStatusOf(body.error.code)).send(body);
    }
    case 'step-tested':
      // Keyed by a test's id, which no run's caller waits on.
      throw new FlowboxError('INTERNAL', `a step test's answer reached the caller of run ${outcome.runId}`);
    case 'shutdown': {
      const body: ErrorBody = {
        error: { code: 'APP_SHUTTING_DOWN', message: 'this app instance is shutting down; the run goes on' },
        runId: outcome.runId,
      };
      return reply.status(httpStatusOf(body.error.code)).send(body);
    }
  }
}
