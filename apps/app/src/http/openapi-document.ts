import { z } from 'zod';
import type { ApiOperation, OperationResponse } from './api-operation.ts';
import { API_OPERATIONS } from './api-operations.ts';
import { API_KEY_LIMITED } from './operations/responses.ts';

type JsonSchema = Record<string, unknown>;

/** The public API's version (the `/v1` of its paths), as the OpenAPI document names it. */
export const API_VERSION = '1.0.0';
export interface OpenApiDocument {
  openapi: '3.1.0';
  info: { title: string; version: string; description: string };
  servers: OpenApiServer[];
  security: Array<Record<string, string[]>>;
  tags: Array<{ name: string; description: string }>;
  paths: Record<string, Record<string, JsonSchema>>;
  components: { schemas: Record<string, JsonSchema>; securitySchemes: Record<string, JsonSchema> };
}

export interface OpenApiServer {
  url: string;
  description: string;
}

/**
 * The app that serves the document (at /v1/openapi.json): a relative URL, as each deployment has
 * its own host. `pnpm dev` listens on http://localhost:3000.
 */
export const SERVERS: OpenApiServer[] = [
  { url: '/', description: 'The flowbox app serving this document (pnpm dev: http://localhost:3000)' },
];

const SECURITY_SCHEMES = {
  bearerAuth: {
    type: 'http',
    scheme: 'bearer',
    description: 'The API key (API_KEY): `authorization: Bearer <key>`.',
  },
  apiKeyHeader: {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
    description: 'The API key (API_KEY) in its own header: `x-api-key: <key>`.',
  },
  metricsToken: {
    type: 'http',
    scheme: 'bearer',
    description: 'METRICS_TOKEN, when it is set: `authorization: Bearer <token>`.',
  },
};

const SECURITY: Record<ApiOperation['auth'], Array<Record<string, string[]>>> = {
  apiKey: [{ bearerAuth: [] }, { apiKeyHeader: [] }],
  public: [],
  // No credentials, or the metrics token when METRICS_TOKEN is set.
  metricsToken: [{}, { metricsToken: [] }],
};

const TAGS = [
  { name: 'webhooks', description: 'Start runs of a published flow; no key needed.' },
  { name: 'flows', description: 'Create, version, publish, change and delete flows.' },
  { name: 'runs', description: 'Read runs, their steps and timings; re-run one.' },
  {
    name: 'waits',
    description: "Resume a paused run's `wait` step; the URL's token is the credential, no key needed.",
  },
  { name: 'pieces', description: 'Publish pieces (name@version, immutable) and read the registry.' },
  {
    name: 'connections',
    description: 'Keep secrets encrypted for the runs that use them; values never come back.',
  },
  { name: 'health', description: 'Probes and Prometheus metrics for the platform.' },
  { name: 'document', description: 'This document, for people (Swagger UI) and client generators.' },
];

/** Formats that say all a regex would; zod's long patterns only make the document harder to read. */
const SELF_DESCRIBING_FORMATS = new Set(['date-time', 'uuid', 'uri']);

/**
 * The OpenAPI 3.1 document of every public route, built from API_OPERATIONS and their zod views
 * alone (no app, no stores): `pnpm openapi` writes it to docs/openapi.json and the app serves the
 * same at /v1/openapi.json. Named views (`.meta({ id })`) become components; answers are their
 * output shape, requests their input shape (defaults optional).
 */
export function buildOpenApiDocument(version: string): OpenApiDocument {
  const components: Record<string, JsonSchema> = {};
  const schemaOf = (schema: z.ZodType, io: 'input' | 'output') => convert(schema, io, components);
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of Object.values(API_OPERATIONS) as ApiOperation[]) {
    const path = openApiPath(operation.url);
    paths[path] = { ...paths[path], [operation.method.toLowerCase()]: toOperation(operation, schemaOf) };
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'flowbox',
      version,
      description:
        'Webhook-driven automation flows. Webhooks, health and this document need no key; the management API takes the API key as `authorization: Bearer <key>` or `x-api-key: <key>`.',
    },
    servers: SERVERS,
    security: SECURITY.apiKey,
    tags: TAGS,
    paths,
    components: { schemas: sortKeys(components), securitySchemes: SECURITY_SCHEMES },
  };
}

/** fastify's `/v1/flows/:flowId` as OpenAPI writes it: `/v1/flows/{flowId}`. */
export const openApiPath = (url: string) => url.replaceAll(/:([A-Za-z]+)/g, '{$1}');

type SchemaOf = (schema: z.ZodType, io: 'input' | 'output') => JsonSchema;

function toOperation(operation: ApiOperation, schemaOf: SchemaOf): JsonSchema {
  const { example } = operation;
  const parameters = [
    ...parametersOf(operation.params, 'path', schemaOf),
    ...parametersOf(operation.query, 'query', schemaOf),
    ...parametersOf(operation.headers, 'header', schemaOf),
  ];
  const answers =
    operation.auth === 'apiKey' ? { ...operation.responses, ...API_KEY_LIMITED } : operation.responses;
  const responses = Object.fromEntries(
    Object.entries(answers).map(([status, response]) => [
      status,
      toResponse(response, Number(status) === example.status ? example.response : undefined, schemaOf),
    ]),
  );
  return {
    operationId: operation.operationId,
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description === undefined ? {} : { description: operation.description }),
    ...(operation.auth === 'apiKey' ? {} : { security: SECURITY[operation.auth] }),
    ...(parameters.length === 0 ? {} : { parameters }),
    ...(operation.body === undefined ? {} : { requestBody: toRequestBody(operation, schemaOf) }),
    responses,
  };
}

function toRequestBody(operation: ApiOperation, schemaOf: SchemaOf): JsonSchema {
  const { body, example } = operation;
  const bodies: Record<string, z.ZodType> =
    body instanceof z.ZodType ? { 'application/json': body } : { ...body };
  const content = Object.fromEntries(
    Object.entries(bodies).map(([type, schema]) => [
      type,
      {
        schema: schemaOf(schema, 'input'),
        ...(type === 'application/json' && example.request !== undefined ? { example: example.request } : {}),
      },
    ]),
  );
  // A webhook may be posted empty (its flow sees `{}`); the API's JSON bodies are required unless
  // the operation says its defaults stand in for one.
  return { required: body instanceof z.ZodType && operation.bodyOptional !== true, content };
}

function toResponse(response: OperationResponse, example: unknown, schemaOf: SchemaOf): JsonSchema {
  const bodies: Record<string, z.ZodType> =
    response.view !== undefined ? { 'application/json': response.view } : { ...response.content };
  const entries = Object.entries(bodies);
  if (entries.length === 0) return { description: response.description };
  const content = Object.fromEntries(
    entries.map(([type, schema]) => [
      type,
      { schema: schemaOf(schema, 'output'), ...(example === undefined ? {} : { example }) },
    ]),
  );
  return { description: response.description, content };
}

function parametersOf(
  schema: z.ZodType | undefined,
  place: 'path' | 'query' | 'header',
  schemaOf: SchemaOf,
): JsonSchema[] {
  if (schema === undefined) return [];
  const json = schemaOf(schema, 'input');
  const properties = json.properties as Record<string, JsonSchema> | undefined;
  if (properties === undefined) {
    // A free-form query (webhooks): one object parameter, each key its own query parameter.
    const { description, ...rest } = json;
    return [{ name: 'query', in: place, description, schema: rest, style: 'form', explode: true }];
  }
  const required = new Set((json.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => {
    const { description, ...rest } = property;
    return {
      name,
      in: place,
      required: place === 'path' || required.has(name),
      ...(description === undefined ? {} : { description }),
      schema: rest,
    };
  });
}

/**
 * One schema as JSON Schema 2020-12; its named parts are moved into `components`. A named part
 * whose request shape differs from its answer shape (defaults are optional in requests) is
 * `<id>Input` in requests, so one name never stands for two shapes (request views, `*Request`
 * and `*Input`, are named for their direction already).
 */
function convert(
  schema: z.ZodType,
  io: 'input' | 'output',
  components: Record<string, JsonSchema>,
): JsonSchema {
  const toJson = (as: 'input' | 'output') =>
    z.toJSONSchema(schema, { target: 'draft-2020-12', io: as, unrepresentable: 'any' }) as JsonSchema & {
      $defs?: Record<string, JsonSchema>;
    };
  const { $schema: _dialect, $defs, ...json } = toJson(io);
  const renamed = new Map<string, string>();
  if (io === 'input' && $defs !== undefined) {
    const answers = toJson('output').$defs ?? {};
    for (const [id, definition] of Object.entries($defs)) {
      const answer = answers[id];
      if (
        !REQUEST_VIEW.test(id) &&
        answer !== undefined &&
        JSON.stringify(answer) !== JSON.stringify(definition)
      ) {
        renamed.set(id, `${id}Input`);
      }
    }
  }
  for (const [id, definition] of Object.entries($defs ?? {})) {
    components[renamed.get(id) ?? id] ??= tidy(definition, renamed);
  }
  return tidy(json, renamed);
}

const REQUEST_VIEW = /(Request|Input)$/;

function tidy(schema: JsonSchema, renamed: ReadonlyMap<string, string>): JsonSchema {
  return JSON.parse(JSON.stringify(schema), (key, value: unknown) => {
    if (key === '$ref' && typeof value === 'string' && value.startsWith('#/$defs/')) {
      const id = value.slice('#/$defs/'.length);
      return `#/components/schemas/${renamed.get(id) ?? id}`;
    }
    if (isRecord(value) && typeof value.format === 'string' && SELF_DESCRIBING_FORMATS.has(value.format)) {
      const { pattern: _pattern, ...rest } = value;
      return rest;
    }
    return value;
  }) as JsonSchema;
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

function sortKeys<T>(record: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.entries(record).sort(([a], [b]) => a.localeCompare(b)));
}
