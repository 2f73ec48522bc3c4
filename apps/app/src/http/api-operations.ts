import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { z } from 'zod';
import {
  EXAMPLE_IDS,
  errorExample,
  FLOW_EXAMPLE,
  READY_EXAMPLE,
  RUN_EXAMPLE,
  RUN_STATS_EXAMPLE,
  RUN_SUMMARY_EXAMPLE,
  VERSION_EXAMPLE,
} from './api-examples.ts';
import type { ApiOperation, OperationResponse } from './api-operation.ts';
import { ErrorView } from './views/error-view.ts';
import {
  AddVersionBody,
  CreateFlowBody,
  FlowParams,
  FlowVersionParams,
  UpdateFlowBody,
} from './views/flow-requests.ts';
import {
  CreatedFlowView,
  FlowListView,
  FlowVersionEnvelopeView,
  FlowVersionListView,
  FlowView,
} from './views/flow-view.ts';
import { LiveView, ReadyView } from './views/health-view.ts';
import { ListRunsQuery, RunParams, RunStatsQuery } from './views/run-requests.ts';
import { RunStatsView } from './views/run-stats-view.ts';
import { RerunAcceptedView, RunAcceptedView, RunPageView, RunView } from './views/run-view.ts';
import { WEBHOOK_BODIES, WebhookQuery } from './views/webhook-request.ts';

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'The request is invalid (INVALID_REQUEST, with the issues; INVALID_BODY).',
  401: 'No key or the wrong one (UNAUTHORIZED).',
  404: 'No such flow, version or run.',
  410: "The run's trigger request is gone (retention, or it predates kept requests).",
  413: 'The body is over WEBHOOK_BODY_LIMIT_BYTES (BODY_TOO_LARGE).',
  429: 'The flow has too many queued or running runs (admission).',
  500: 'An internal error.',
  502: "The flow's run failed before it answered.",
  503: 'Redis or Postgres is unavailable, or the app is draining; retry later.',
  504: 'No answer within WEBHOOK_TIMEOUT_SECONDS.',
};

const errors = (...statuses: number[]): Record<number, OperationResponse> =>
  Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: ERROR_DESCRIPTIONS[status] ?? 'error', view: ErrorView },
    ]),
  );

/** Refused by the server before any route, in Node's and fastify's own words (no Error body). */
const SERVER_LIMITS: Record<number, OperationResponse> = {
  414: { description: 'A flow id longer than 100 characters (fastify maxParamLength).' },
  431: {
    description: 'Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize).',
  },
};

const WEBHOOK_REQUEST_NOTE =
  "The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, " +
  '`body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). ' +
  'Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; ' +
  "`{{trigger.x}}` is the body's `x`.";

const FLOW_ANSWER: OperationResponse = {
  description: "The flow's own response (its status, headers and body).",
};
const ACCEPTED: OperationResponse = { description: 'Accepted.', view: RunAcceptedView };
const ORDER = { orderId: 'A-1001', total: 42.5 };

/** Every public route (the engine's callbacks, the inspector and the docs page are not). */
export const API_OPERATIONS = {
  triggerWebhookSync: {
    operationId: 'triggerWebhookSync',
    method: 'POST',
    url: '/v1/webhooks/:flowId/sync',
    tag: 'webhooks',
    summary: "Runs the flow and answers with its response step's status, headers and body.",
    description: WEBHOOK_REQUEST_NOTE,
    auth: 'public',
    params: FlowParams,
    query: WebhookQuery,
    body: WEBHOOK_BODIES,
    passThrough: true,
    responses: { 200: FLOW_ANSWER, ...errors(400, 404, 413, 429, 500, 502, 503, 504), ...SERVER_LIMITS },
    example: {
      request: ORDER,
      status: 504,
      response: errorExample('WEBHOOK_TIMEOUT', 'no answer within 30 s'),
    },
  },
  triggerWebhookSyncGet: {
    operationId: 'triggerWebhookSyncGet',
    method: 'GET',
    url: '/v1/webhooks/:flowId/sync',
    tag: 'webhooks',
    summary: "Runs the flow with the query string (no body) and answers with its response step's answer.",
    description: WEBHOOK_REQUEST_NOTE,
    auth: 'public',
    params: FlowParams,
    query: WebhookQuery,
    passThrough: true,
    responses: { 200: FLOW_ANSWER, ...errors(400, 404, 429, 500, 502, 503, 504), ...SERVER_LIMITS },
    example: { status: 404, response: errorExample('FLOW_NOT_FOUND', 'flow orders not found') },
  },
  triggerWebhook: {
    operationId: 'triggerWebhook',
    method: 'POST',
    url: '/v1/webhooks/:flowId',
    tag: 'webhooks',
    summary: 'Accepts a run and answers at once with its id; read it with GET /v1/runs/{runId}.',
    description: WEBHOOK_REQUEST_NOTE,
    auth: 'public',
    params: FlowParams,
    query: WebhookQuery,
    body: WEBHOOK_BODIES,
    responses: { 202: ACCEPTED, ...errors(400, 404, 413, 429, 503), ...SERVER_LIMITS },
    example: { request: ORDER, status: 202, response: { runId: EXAMPLE_IDS.RUN_ID } },
  },
  triggerWebhookGet: {
    operationId: 'triggerWebhookGet',
    method: 'GET',
    url: '/v1/webhooks/:flowId',
    tag: 'webhooks',
    summary: 'Accepts a run of the query string (no body) and answers at once with its id.',
    description: WEBHOOK_REQUEST_NOTE,
    auth: 'public',
    params: FlowParams,
    query: WebhookQuery,
    responses: { 202: ACCEPTED, ...errors(400, 404, 429, 503), ...SERVER_LIMITS },
    example: { status: 202, response: { runId: EXAMPLE_IDS.RUN_ID } },
  },
  createFlow: {
    operationId: 'createFlow',
    method: 'POST',
    url: '/v1/flows',
    tag: 'flows',
    summary: 'Creates a flow with its version 1, published when asked.',
    auth: 'apiKey',
    body: CreateFlowBody,
    responses: { 201: { description: 'Created.', view: CreatedFlowView }, ...errors(400, 401) },
    example: {
      request: { id: 'orders', name: 'New orders', definition: BENCHMARK_FLOW, publish: true },
      status: 201,
      response: { flow: FLOW_EXAMPLE, version: VERSION_EXAMPLE },
    },
  },
  listFlows: {
    operationId: 'listFlows',
    method: 'GET',
    url: '/v1/flows',
    tag: 'flows',
    summary: 'Every flow.',
    auth: 'apiKey',
    responses: { 200: { description: 'The flows.', view: FlowListView }, ...errors(401) },
    example: { status: 200, response: { flows: [FLOW_EXAMPLE] } },
  },
  getFlow: {
    operationId: 'getFlow',
    method: 'GET',
    url: '/v1/flows/:flowId',
    tag: 'flows',
    summary: 'One flow.',
    auth: 'apiKey',
    params: FlowParams,
    responses: { 200: { description: 'The flow.', view: FlowView }, ...errors(401, 404) },
    example: { status: 200, response: FLOW_EXAMPLE },
  },
  updateFlow: {
    operationId: 'updateFlow',
    method: 'PATCH',
    url: '/v1/flows/:flowId',
    tag: 'flows',
    summary: 'Renames, enables or disables a flow (a disabled flow answers its webhooks 404).',
    auth: 'apiKey',
    params: FlowParams,
    body: UpdateFlowBody,
    responses: { 200: { description: 'The flow as changed.', view: FlowView }, ...errors(400, 401, 404) },
    example: { request: { enabled: false }, status: 200, response: { ...FLOW_EXAMPLE, enabled: false } },
  },
  deleteFlow: {
    operationId: 'deleteFlow',
    method: 'DELETE',
    url: '/v1/flows/:flowId',
    tag: 'flows',
    summary: 'Deletes a flow: its webhooks answer 404 at once on every app.',
    description:
      'Its runs stay readable until retention (RUN_RETENTION_DAYS) takes them, and its versions stay for them. The id stays taken.',
    auth: 'apiKey',
    params: FlowParams,
    responses: { 204: { description: 'Deleted.' }, ...errors(401, 404) },
    example: { status: 404, response: errorExample('FLOW_NOT_FOUND', 'flow orders not found') },
  },
  listFlowVersions: {
    operationId: 'listFlowVersions',
    method: 'GET',
    url: '/v1/flows/:flowId/versions',
    tag: 'flows',
    summary: "A flow's versions.",
    auth: 'apiKey',
    params: FlowParams,
    responses: { 200: { description: 'The versions.', view: FlowVersionListView }, ...errors(401, 404) },
    example: { status: 200, response: { versions: [VERSION_EXAMPLE] } },
  },
  addFlowVersion: {
    operationId: 'addFlowVersion',
    method: 'POST',
    url: '/v1/flows/:flowId/versions',
    tag: 'flows',
    summary: 'Adds a version to a flow, published when asked.',
    auth: 'apiKey',
    params: FlowParams,
    body: AddVersionBody,
    responses: { 201: { description: 'Created.', view: FlowVersionEnvelopeView }, ...errors(400, 401, 404) },
    example: {
      request: { definition: BENCHMARK_FLOW },
      status: 201,
      response: {
        version: {
          ...VERSION_EXAMPLE,
          id: 'orders-v2',
          number: 2,
          published: false,
          bundle: null,
          publishedAt: null,
        },
      },
    },
  },
  publishFlowVersion: {
    operationId: 'publishFlowVersion',
    method: 'POST',
    url: '/v1/flows/:flowId/versions/:versionId/publish',
    tag: 'flows',
    summary: "Publishes a version: builds its bundle and makes it the flow's live version.",
    auth: 'apiKey',
    params: FlowVersionParams,
    responses: { 200: { description: 'Published.', view: FlowVersionEnvelopeView }, ...errors(401, 404) },
    example: { status: 200, response: { version: VERSION_EXAMPLE } },
  },
  getRun: {
    operationId: 'getRun',
    method: 'GET',
    url: '/v1/runs/:runId',
    tag: 'runs',
    summary: 'One run: status, steps, error, latency anatomy and a presigned link to its log.',
    auth: 'apiKey',
    params: RunParams,
    responses: { 200: { description: 'The run.', view: RunView }, ...errors(401, 404) },
    example: { status: 200, response: RUN_EXAMPLE },
  },
  rerunRun: {
    operationId: 'rerunRun',
    method: 'POST',
    url: '/v1/runs/:runId/rerun',
    tag: 'runs',
    summary: "Starts a new run of the run's flow version with the same trigger request.",
    description:
      "Asynchronously; the new run's `rerunOf` names this one. 410 when the request is gone (retention deleted the run, or it predates kept requests).",
    auth: 'apiKey',
    params: RunParams,
    responses: {
      202: { description: 'The new run, accepted.', view: RerunAcceptedView },
      ...errors(401, 404, 410, 503),
    },
    example: { status: 202, response: { runId: EXAMPLE_IDS.RERUN_ID, rerunOf: EXAMPLE_IDS.RUN_ID } },
  },
  listRuns: {
    operationId: 'listRuns',
    method: 'GET',
    url: '/v1/runs',
    tag: 'runs',
    summary: 'Runs without their steps, one page at a time.',
    description:
      'Pass `nextCursor` back as `cursor`; filtered by flow, status and start; oldest first unless `order=newest`.',
    auth: 'apiKey',
    query: ListRunsQuery,
    responses: { 200: { description: 'A page of runs.', view: RunPageView }, ...errors(400, 401) },
    example: { status: 200, response: { runs: [RUN_SUMMARY_EXAMPLE], nextCursor: null } },
  },
  getRunStats: {
    operationId: 'getRunStats',
    method: 'GET',
    url: '/v1/runs/stats',
    tag: 'runs',
    summary: 'Throughput and latency percentiles of the runs accepted in the last `windowSeconds`.',
    description: 'Per `bucketSeconds` and in total, from Postgres (every app instance).',
    auth: 'apiKey',
    query: RunStatsQuery,
    responses: {
      200: { description: 'Figures per bucket, oldest first, empty buckets included.', view: RunStatsView },
      ...errors(400, 401),
    },
    example: { status: 200, response: RUN_STATS_EXAMPLE },
  },
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
    },
    example: {
      status: 200,
      response:
        '# TYPE flowbox_webhook_responses_total counter\nflowbox_webhook_responses_total{status="202"} 41\n',
    },
  },
} as const satisfies Record<string, ApiOperation>;

export type ApiOperationId = keyof typeof API_OPERATIONS;
