import type { Logger } from '@flowbox/node-kit';
import Fastify, { type FastifyBaseLogger, type FastifyInstance } from 'fastify';
import type { AppConfig } from '../env.ts';
import { installErrorHandler } from './error-handler.ts';
import { installJsonBodyParser } from './json-body.ts';
import { serverTimeouts } from './server-timeouts.ts';

/**
 * The fastify server before any route: limits, timeouts, the JSON-only body parser, flowbox's
 * error format, and the connection-close header while the app drains.
 */
export function createHttpServer(
  config: AppConfig,
  logger: Logger,
  isDraining: () => boolean,
): FastifyInstance {
  const http: FastifyInstance = Fastify({
    // Per-request lines would double the hot path's log volume; failures are logged by the
    // error handler. (pino's Logger and FastifyBaseLogger differ only in generics.)
    loggerInstance: logger.child({ component: 'http' }, { level: 'warn' }) as FastifyBaseLogger,
    bodyLimit: config.WEBHOOK_BODY_LIMIT_BYTES,
    ...serverTimeouts(config.HTTP_REQUEST_TIMEOUT_SECONDS),
  });
  // The API takes JSON only (415 otherwise); the webhook routes have their own parser for any
  // content type (webhook-body.ts).
  http.removeContentTypeParser('text/plain');
  installJsonBodyParser(http);
  installErrorHandler(http, logger);
  // From SIGTERM on, every answer closes its connection (drain()): a keep-alive client opens a
  // new one, which the load balancer sends elsewhere, instead of reusing one about to close.
  http.addHook('onRequest', (_request, reply, done) => {
    if (isDraining()) void reply.header('connection', 'close');
    done();
  });
  return http;
}
