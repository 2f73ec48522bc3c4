import type { Logger } from '@flowbox/node-kit';
import { ERROR_CATALOG, type ErrorCode, FlowboxError, httpStatusOf, isFlowboxError } from '@flowbox/protocol';
import type { FastifyError, FastifyInstance } from 'fastify';

/** Fastify's own errors that are the caller's fault, mapped into flowbox's catalog. */
const FASTIFY_CODES: Record<string, ErrorCode> = {
  FST_ERR_CTP_BODY_TOO_LARGE: 'BODY_TOO_LARGE',
  FST_ERR_CTP_INVALID_MEDIA_TYPE: 'UNSUPPORTED_MEDIA_TYPE',
  FST_ERR_CTP_INVALID_CONTENT_LENGTH: 'INVALID_BODY',
  FST_ERR_CTP_EMPTY_JSON_BODY: 'INVALID_BODY',
  FST_ERR_CTP_INVALID_JSON_BODY: 'INVALID_BODY',
  FST_ERR_VALIDATION: 'INVALID_REQUEST',
};

export interface ErrorBody {
  error: { code: ErrorCode; message: string };
  runId?: string;
}

export function toFlowboxError(error: FastifyError | Error): FlowboxError {
  if (isFlowboxError(error)) return error;
  const fastifyCode = (error as FastifyError).code;
  const mapped = fastifyCode === undefined ? undefined : FASTIFY_CODES[fastifyCode];
  if (mapped !== undefined) return new FlowboxError(mapped, error.message, { cause: error });
  // Fastify's JSON parser reports bad JSON as a SyntaxError with status 400.
  if (error instanceof SyntaxError || (error as FastifyError).statusCode === 400) {
    return new FlowboxError('INVALID_BODY', `body is not valid JSON: ${error.message}`, { cause: error });
  }
  return new FlowboxError('INTERNAL', 'internal error', { cause: error });
}

export function installErrorHandler(app: FastifyInstance, logger: Logger): void {
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const flowboxError = toFlowboxError(error);
    const { httpStatus, family } = ERROR_CATALOG[flowboxError.code];
    // Redis being down is logged once when it starts and once when it ends (RedisOutage).
    if (family === 'system' && flowboxError.code !== 'QUEUE_UNAVAILABLE')
      logger.error({ err: error, url: request.url }, 'request failed');
    const body: ErrorBody = { error: { code: flowboxError.code, message: flowboxError.message } };
    return reply.status(httpStatus).send(body);
  });
  app.setNotFoundHandler((request, reply) => {
    const body: ErrorBody = {
      error: { code: 'ROUTE_NOT_FOUND', message: `no route ${request.method} ${request.url}` },
    };
    return reply.status(httpStatusOf(body.error.code)).send(body);
  });
}
