import { z } from 'zod';
import { EXAMPLE_IDS, errorExample } from '../api-examples.ts';
import type { ApiOperation, OperationResponse } from '../api-operation.ts';
import { FlowParams } from '../views/flow-requests.ts';
import { RunAcceptedView } from '../views/run-view.ts';
import { WEBHOOK_BODIES, WebhookQuery } from '../views/webhook-request.ts';
import { errors, NOT_A_WEBHOOK, SERVER_LIMITS, SIGNATURE_REFUSED } from './responses.ts';

const WEBHOOK_REQUEST_NOTE =
  "The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, " +
  '`body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). ' +
  'Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; ' +
  "`{{trigger.x}}` is the body's `x`.";

/** The IETF httpapi draft's field; see docs/guarantees.md (idempotency keys). */
const WebhookHeaders = z.object({
  'Idempotency-Key': z
    .string()
    .min(1)
    .max(255)
    .optional()
    .describe(
      'At most one run per flow and key within IDEMPOTENCY_TTL_HOURS: a repeat gets the first request\'s run (async: the same 202; sync: the same answer, waited for while the run runs). A repeat with another body is 422. A structured-field string (`"abc"`) or a bare token.',
    ),
});

const FLOW_ANSWER: OperationResponse = {
  description:
    "The flow's own response (its status, headers and body). A failed run answers the flow's `errorResponse` when it has one, else flowbox's error naming the run.",
};
const NO_ANSWER: OperationResponse = {
  description:
    'The run succeeded but no step answered (no response step on the path it took): no body; `x-flowbox-run-id` names the run.',
};
const ACCEPTED: OperationResponse = { description: 'Accepted.', view: RunAcceptedView };
const ORDER = { orderId: 'A-1001', total: 42.5 };

/** The webhooks: public, each a POST (any body) and a GET (the query string). */
export const WEBHOOK_OPERATIONS = {
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
    headers: WebhookHeaders,
    body: WEBHOOK_BODIES,
    passThrough: true,
    responses: {
      200: FLOW_ANSWER,
      204: NO_ANSWER,
      ...errors(400, 404, 413, 422, 429, 500, 502, 503, 504),
      ...SIGNATURE_REFUSED,
      ...NOT_A_WEBHOOK,
      ...SERVER_LIMITS,
    },
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
    headers: WebhookHeaders,
    passThrough: true,
    responses: {
      200: FLOW_ANSWER,
      204: NO_ANSWER,
      ...errors(400, 404, 422, 429, 500, 502, 503, 504),
      ...SIGNATURE_REFUSED,
      ...NOT_A_WEBHOOK,
      ...SERVER_LIMITS,
    },
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
    headers: WebhookHeaders,
    body: WEBHOOK_BODIES,
    responses: {
      202: ACCEPTED,
      ...errors(400, 404, 413, 422, 429, 503),
      ...SIGNATURE_REFUSED,
      ...NOT_A_WEBHOOK,
      ...SERVER_LIMITS,
    },
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
    headers: WebhookHeaders,
    responses: {
      202: ACCEPTED,
      ...errors(400, 404, 422, 429, 503),
      ...SIGNATURE_REFUSED,
      ...NOT_A_WEBHOOK,
      ...SERVER_LIMITS,
    },
    example: { status: 202, response: { runId: EXAMPLE_IDS.RUN_ID } },
  },
} as const satisfies Record<string, ApiOperation>;
