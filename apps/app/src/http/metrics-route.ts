import type { FastifyInstance } from 'fastify';
import type { AppMetrics } from '../metrics/app-metrics.ts';
import { requireMetricsToken } from './api-key.ts';
import { API_OPERATIONS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';

const CALLBACK_ROUTE = /^\/v1\/engine\/runs\/:runId\/(steps|response)$/;

/**
 * `GET /metrics` in the Prometheus text format, without the API key (a scraper reads it, and it
 * holds counts, no flow id and no secret), behind `authorization: Bearer <METRICS_TOKEN>` when
 * that is set. Webhook answers and engine callbacks are counted here, by the route fastify
 * matched, once each response is sent.
 */
export function registerMetricsRoute(
  app: FastifyInstance,
  metrics: AppMetrics,
  options: { token?: string | undefined } = {},
): void {
  const onRequest = options.token === undefined ? [] : [requireMetricsToken(options.token)];
  app.route({
    ...apiRoute(API_OPERATIONS.getMetrics),
    onRequest,
    handler: async (_request, reply) => {
      const { contentType, body } = await metrics.render();
      return reply.type(contentType).send(body);
    },
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
