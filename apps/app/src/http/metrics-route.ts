import fastifyRateLimit from '@fastify/rate-limit';
import type { Logger } from '@flowbox/node-kit';
import type { FastifyInstance } from 'fastify';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import type { RedisClient } from '../redis/redis-clients.ts';
import { requireMetricsToken } from './api-key.ts';
import { type ApiKeyFailureSettings, ApiKeyFailures } from './api-key-failures.ts';
import { API_OPERATIONS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';

const CALLBACK_ROUTE = /^\/v1\/engine\/runs\/:runId\/(steps|response|subflows)$/;

/**
 * `GET /metrics` in the Prometheus text format, without the API key (a scraper reads it, and it
 * holds counts, no flow id and no secret), behind `authorization: Bearer <METRICS_TOKEN>` when
 * that is set; wrong tokens are limited per address as wrong API keys are, in a count of their
 * own. Webhook answers and engine callbacks are counted here, by the route fastify matched, once
 * each response is sent.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: AppMetrics,
  options: {
    token?: string | undefined;
    /** Where wrong tokens are counted (with a token): the API key's limit, a count of their own. */
    failures: { redis: RedisClient; nameSpace: string; settings: ApiKeyFailureSettings; logger: Logger };
  },
): void {
  const { token, failures } = options;
  void app.register(async (scope) => {
    let onRequest: ReturnType<typeof requireMetricsToken>[] = [];
    if (token !== undefined) {
      await scope.register(fastifyRateLimit, {
        global: false,
        redis: failures.redis,
        nameSpace: failures.nameSpace,
      });
      const counted = ApiKeyFailures.create(scope, {
        metrics,
        logger: failures.logger,
        settings: failures.settings,
        credential: { name: 'metrics token', refused: (answer) => metrics.metricsTokenRefused(answer) },
      });
      onRequest = [requireMetricsToken(token, counted)];
    }
    scope.route({
      ...apiRoute(API_OPERATIONS.getMetrics),
      onRequest,
      handler: async (_request, reply) => {
        const { contentType, body } = await metrics.render();
        return reply.type(contentType).send(body);
      },
    });
  });
  app.addHook('onResponse', async (request, reply) => {
    const route = request.routeOptions.url ?? '';
    if (route.startsWith('/v1/webhooks/')) {
      metrics.webhookAnswered(reply.statusCode);
      return;
    }
    const callback = CALLBACK_ROUTE.exec(route);
    if (callback?.[1] !== undefined) metrics.engineCallback(callback[1], reply.statusCode);
  });
}
