import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { errorExample, FLOW_EXAMPLE, VERSION_EXAMPLE } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import {
  AddVersionBody,
  CreateFlowBody,
  FlowParams,
  FlowVersionParams,
  UpdateFlowBody,
} from '../views/flow-requests.ts';
import {
  CreatedFlowView,
  FlowListView,
  FlowVersionEnvelopeView,
  FlowVersionListView,
  FlowView,
} from '../views/flow-view.ts';
import { RefusedDeliveriesQuery, RefusedDeliveryListView } from '../views/refused-delivery-view.ts';
import { errors } from './responses.ts';

/** The management API for flows (behind the API key). */
export const FLOW_OPERATIONS = {
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
      response: { flow: FLOW_EXAMPLE, version: VERSION_EXAMPLE, warnings: [] },
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
        warnings: [],
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
    example: { status: 200, response: { version: VERSION_EXAMPLE, warnings: [] } },
  },
  listRefusedDeliveries: {
    operationId: 'listRefusedDeliveries',
    method: 'GET',
    url: '/v1/flows/:flowId/deliveries/refused',
    tag: 'flows',
    summary: "The flow's webhooks refused before any run existed, newest first.",
    description:
      'A bad signature, a body too large or not parsable, a full queue, the flow disabled or unpublished: the last REFUSED_DELIVERIES_PER_FLOW of them, kept RUN_RETENTION_DAYS, with their headers without credentials. Written once a second, so a refusal appears within about a second.',
    auth: 'apiKey',
    params: FlowParams,
    query: RefusedDeliveriesQuery,
    responses: {
      200: { description: 'The refusals.', view: RefusedDeliveryListView },
      ...errors(400, 401, 404),
    },
    example: {
      status: 200,
      response: {
        deliveries: [
          {
            receivedAt: '2026-11-25T10:00:00.000Z',
            code: 'WEBHOOK_SIGNATURE_INVALID',
            message:
              "the webhook's signature was refused: the x-hub-signature-256 signature does not match the body",
            httpStatus: 401,
            method: 'POST',
            sync: false,
            sourceAddress: '192.0.2.10',
            headers: { 'content-type': 'application/json', 'x-github-event': 'push' },
            suppressed: 0,
          },
        ],
      },
    },
  },
} as const satisfies Record<string, ApiOperation>;
