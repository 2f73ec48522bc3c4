import { z } from 'zod';
import { READY_EXAMPLE } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import { LiveView, ReadyView } from '../views/health-view.ts';
import { errors, METRICS_TOKEN_LIMITED } from './responses.ts';

/** Probes and metrics: public (metrics behind METRICS_TOKEN when it is set). */
export const HEALTH_OPERATIONS = {
  getLive: {
    operationId: 'getLive',
    method: 'GET',
    url: '/health/live',
    tag: 'health',
    summary: 'The process answers.',
    auth: 'public',
    responses: { 200: { description: 'Alive.', view: LiveView } },
    example: { status: 200, response: { status: 'ok' } },
  },
  getReady: {
    operationId: 'getReady',
    method: 'GET',
    url: '/health/ready',
    tag: 'health',
    summary: 'Postgres and Redis answer; with the number of connected workers.',
    auth: 'public',
    responses: {
      200: { description: 'Ready.', view: ReadyView },
      503: { description: 'Not ready (a store is unavailable, or the app is draining).', view: ReadyView },
    },
    example: { status: 200, response: READY_EXAMPLE },
  },
  getMetrics: {
    operationId: 'getMetrics',
    method: 'GET',
    url: '/metrics',
    tag: 'health',
    summary: 'Prometheus metrics (text format 0.0.4).',
    description: 'Behind `authorization: Bearer <METRICS_TOKEN>` when that is set; open otherwise.',
    auth: 'metricsToken',
    responses: {
      200: { description: 'Metrics.', content: { 'text/plain': z.string() } },
      ...errors(401),
      ...METRICS_TOKEN_LIMITED,
    },
    example: {
      status: 200,
      response:
        '# TYPE flowbox_webhook_responses_total counter\nflowbox_webhook_responses_total{status="202"} 41\n',
    },
  },
} as const satisfies Record<string, ApiOperation>;
