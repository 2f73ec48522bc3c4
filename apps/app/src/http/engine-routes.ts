import {
  type EngineReport,
  FlowboxError,
  FlowResponseReportSchema,
  parseMessage,
  StepReportSchema,
  SubflowStartSchema,
  TRACEPARENT_HEADER,
} from '@flowbox/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { z } from 'zod';
import type { EngineCallbacks } from './engine-callbacks.ts';

export interface EngineRouteDeps {
  /** The checks and keeping shared with the worker's socket (engine-callbacks.ts). */
  callbacks: EngineCallbacks;
  /** Largest callback body: the steps a report carries are bounded by the run log's limit. */
  bodyLimit: number;
}

interface EngineRequest {
  Params: { runId: string };
  Body: unknown;
}

/**
 * The engine callback API over HTTP, for clients outside a worker (an engine under a worker
 * sends the same reports over IPC and its worker's socket). Every call carries a JWT scoped to
 * one run in `authorization: Bearer`; a traced run's call names its engine span in `traceparent`.
 */
export function registerEngineRoutes(app: FastifyInstance, deps: EngineRouteDeps): void {
  const route =
    (schema: z.ZodType<EngineReport>) =>
    async (request: FastifyRequest<EngineRequest>, reply: FastifyReply): Promise<FastifyReply> => {
      const header = request.headers.authorization;
      const token = header?.startsWith('Bearer ') === true ? header.slice('Bearer '.length) : undefined;
      const claims = deps.callbacks.authorize(token, request.params.runId);
      const parsed = parseMessage(schema, request.body);
      if (!parsed.ok) throw new FlowboxError('INVALID_REQUEST', parsed.error);
      const parent = request.headers[TRACEPARENT_HEADER];
      const result = await deps.callbacks.handle(claims, parsed.value, {
        parent: typeof parent === 'string' ? parent : undefined,
        log: request.log,
        attributes: { 'http.request.method': 'POST' },
      });
      // A sub-flow's start answers its child's id; the other reports nothing.
      return result === undefined ? reply.status(204).send() : reply.status(200).send(result);
    };

  app.post<EngineRequest>(
    '/v1/engine/runs/:runId/steps',
    { bodyLimit: deps.bodyLimit },
    route(StepReportSchema),
  );
  app.post<EngineRequest>(
    '/v1/engine/runs/:runId/response',
    { bodyLimit: deps.bodyLimit },
    route(FlowResponseReportSchema),
  );
  app.post<EngineRequest>(
    '/v1/engine/runs/:runId/subflows',
    { bodyLimit: deps.bodyLimit },
    route(SubflowStartSchema),
  );
}
