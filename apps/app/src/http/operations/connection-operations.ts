import { errorExample } from '../api-examples.ts';
import type { ApiOperation } from '../api-operation.ts';
import {
  ConnectionListView,
  ConnectionParams,
  ConnectionView,
  CreateConnectionBody,
  UpdateConnectionBody,
} from '../views/connection-view.ts';
import { errors } from './responses.ts';

const CONNECTION_EXAMPLE: ConnectionView = {
  name: 'stripe_key',
  createdAt: '2026-11-25T18:00:00.000Z',
  updatedAt: '2026-11-25T18:00:00.000Z',
  usedBy: [{ flowId: 'orders', flowVersionId: 'orders-v1' }],
};

/** The management API for connections (behind the API key): values go in and never come out. */
export const CONNECTION_OPERATIONS = {
  createConnection: {
    operationId: 'createConnection',
    method: 'POST',
    url: '/v1/connections',
    tag: 'connections',
    summary: 'Keeps a secret, encrypted, for the runs of flows that reference it as {{connections.<name>}}.',
    auth: 'apiKey',
    body: CreateConnectionBody,
    responses: { 201: { description: 'Created.', view: ConnectionView }, ...errors(400, 401, 409) },
    example: {
      request: { name: 'stripe_key', value: 'sk_live_…' },
      status: 201,
      response: { ...CONNECTION_EXAMPLE, usedBy: [] },
    },
  },
  listConnections: {
    operationId: 'listConnections',
    method: 'GET',
    url: '/v1/connections',
    tag: 'connections',
    summary: 'Every connection: names, dates and the flows using each, never values.',
    auth: 'apiKey',
    responses: { 200: { description: 'The connections.', view: ConnectionListView }, ...errors(401) },
    example: { status: 200, response: { connections: [CONNECTION_EXAMPLE] } },
  },
  getConnection: {
    operationId: 'getConnection',
    method: 'GET',
    url: '/v1/connections/:name',
    tag: 'connections',
    summary: 'One connection, without its value.',
    auth: 'apiKey',
    params: ConnectionParams,
    responses: { 200: { description: 'The connection.', view: ConnectionView }, ...errors(401, 404) },
    example: { status: 200, response: CONNECTION_EXAMPLE },
  },
  updateConnection: {
    operationId: 'updateConnection',
    method: 'PUT',
    url: '/v1/connections/:name',
    tag: 'connections',
    summary: "Replaces a connection's value (a rotation): runs dispatched from now on get the new one.",
    auth: 'apiKey',
    params: ConnectionParams,
    body: UpdateConnectionBody,
    responses: { 200: { description: 'Updated.', view: ConnectionView }, ...errors(400, 401, 404) },
    example: { request: { value: 'sk_live_…' }, status: 200, response: CONNECTION_EXAMPLE },
  },
  deleteConnection: {
    operationId: 'deleteConnection',
    method: 'DELETE',
    url: '/v1/connections/:name',
    tag: 'connections',
    summary: 'Deletes a connection no published flow version references.',
    description:
      'Answers 409 naming the published versions that reference it. A run of an older version that references it then fails CONNECTION_MISSING.',
    auth: 'apiKey',
    params: ConnectionParams,
    responses: { 204: { description: 'Deleted.' }, ...errors(401, 404, 409) },
    example: {
      status: 409,
      response: errorExample(
        'CONNECTION_IN_USE',
        'connection stripe_key is used by published flow versions orders-v1; publish versions without it (or delete those flows) first',
      ),
    },
  },
} as const satisfies Record<string, ApiOperation>;
