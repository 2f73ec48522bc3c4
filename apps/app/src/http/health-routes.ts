import type { FastifyInstance } from 'fastify';
import { API_OPERATIONS as OPS } from './api-operations.ts';
import { apiRoute } from './view-serializer.ts';

export interface HealthChecks {
  database(): Promise<void>;
  redis(): Promise<void>;
  /** Workers connected to this instance over socket.io. */
  connectedWorkers(): number;
  /** True from SIGTERM on: the app still serves, but a load balancer should stop sending to it. */
  draining(): boolean;
}

/**
 * `live`: the process answers. `ready`: it can take webhooks (Postgres and Redis answer) and is
 * not draining for a shutdown.
 */
export function registerHealthRoutes(app: FastifyInstance, checks: HealthChecks): void {
  app.route({ ...apiRoute(OPS.getLive), handler: async () => ({ status: 'ok' }) });
  app.route({
    ...apiRoute(OPS.getReady),
    handler: async (_request, reply) => {
      const results = await Promise.allSettled([checks.database(), checks.redis()]);
      const [database, redis] = results.map((r) => (r.status === 'fulfilled' ? 'ok' : 'unavailable'));
      const draining = checks.draining();
      const ready = database === 'ok' && redis === 'ok' && !draining;
      const status = draining ? 'draining' : ready ? 'ok' : 'unavailable';
      return reply
        .status(ready ? 200 : 503)
        .send({ status, database, redis, workers: checks.connectedWorkers() });
    },
  });
}
