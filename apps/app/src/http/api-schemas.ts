import {
  FlowDefinitionSchema,
  JobProvisioningSchema,
  JobTimingsSchema,
  RunStatusSchema,
  SerializedErrorSchema,
  StepResultSchema,
} from '@flowbox/protocol';
import { z } from 'zod';

/**
 * JSON Schemas (2020-12, as OpenAPI 3.1 takes them) of the public API's requests and responses,
 * for the OpenAPI document only: the handlers validate with zod and answer in their own words.
 * The shapes shared with the wire protocol come from its zod schemas, so they cannot drift;
 * openapi.test.ts checks every documented answer against these.
 */
type JsonSchema = Record<string, unknown>;

const fromZod = (schema: z.ZodType): JsonSchema => {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, {
    target: 'draft-2020-12',
    unrepresentable: 'any',
  });
  return rest;
};

const dateTime = { type: 'string', format: 'date-time' } as const;
const nullable = (schema: JsonSchema): JsonSchema => ({ anyOf: [schema, { type: 'null' }] });

export const ErrorBody: JsonSchema = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['code', 'message'],
      properties: { code: { type: 'string' }, message: { type: 'string' } },
    },
  },
};

const FlowView: JsonSchema = {
  type: 'object',
  required: ['id', 'name', 'enabled', 'publishedVersionId', 'createdAt', 'updatedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    name: { type: 'string' },
    enabled: { type: 'boolean' },
    publishedVersionId: nullable({ type: 'string' }),
    createdAt: dateTime,
    updatedAt: dateTime,
  },
};

const VersionView: JsonSchema = {
  type: 'object',
  required: ['id', 'flowId', 'number', 'definition', 'published', 'bundle', 'createdAt', 'publishedAt'],
  additionalProperties: false,
  properties: {
    id: { type: 'string' },
    flowId: { type: 'string' },
    number: { type: 'integer', minimum: 1 },
    definition: fromZod(FlowDefinitionSchema),
    published: { type: 'boolean' },
    bundle: nullable({
      type: 'object',
      required: ['sha256', 'sizeBytes', 'pieces'],
      properties: {
        sha256: { type: 'string' },
        sizeBytes: { type: 'integer' },
        pieces: { type: 'array', items: { type: 'object' } },
      },
    }),
    createdAt: dateTime,
    publishedAt: nullable(dateTime),
  },
};

const runProperties = {
  id: { type: 'string', format: 'uuid' },
  flowId: { type: 'string' },
  flowVersionId: { type: 'string' },
  status: fromZod(RunStatusSchema),
  sync: { type: 'boolean' },
  steps: { type: 'array', items: fromZod(StepResultSchema) },
  error: nullable(fromZod(SerializedErrorSchema)),
  logKey: nullable({ type: 'string' }),
  logError: nullable(fromZod(SerializedErrorSchema)),
  timings: nullable({ ...fromZod(JobTimingsSchema.extend({ totalMs: z.number() })) }),
  provisioning: nullable(fromZod(JobProvisioningSchema)),
  workerId: nullable({ type: 'string' }),
  attempts: { type: 'integer', minimum: 0 },
  createdAt: dateTime,
  startedAt: nullable(dateTime),
  finishedAt: nullable(dateTime),
  rerunOf: {
    description:
      'The run this one re-runs (`POST /v1/runs/{runId}/rerun`); it may since be deleted by retention.',
    ...nullable({ type: 'string', format: 'uuid' }),
  },
};
const RUN_REQUIRED = Object.keys(runProperties);

const RunView: JsonSchema = {
  type: 'object',
  required: [...RUN_REQUIRED, 'logUrl', 'reruns'],
  additionalProperties: false,
  properties: {
    ...runProperties,
    reruns: {
      description: 'The runs that re-run this one, oldest first.',
      type: 'array',
      items: { type: 'string', format: 'uuid' },
    },
    logUrl: nullable({ type: 'string', format: 'uri' }),
    response: {
      description: 'While the run is in flight: the response its flow gave, once given.',
      ...nullable({
        type: 'object',
        required: ['status', 'headers', 'body'],
        properties: { status: { type: 'integer' }, headers: { type: 'object' }, body: {} },
      }),
    },
  },
};

/** A run in a list: everything but its steps (the list is for timings; read a run for its steps). */
const { steps: _steps, ...summaryProperties } = runProperties;
const RunSummary: JsonSchema = {
  type: 'object',
  required: Object.keys(summaryProperties),
  additionalProperties: false,
  properties: summaryProperties,
};

const statsProperties = {
  succeeded: { type: 'integer', minimum: 0 },
  failed: { type: 'integer', minimum: 0, description: 'FAILED, TIMEOUT or INTERNAL_ERROR.' },
  inFlight: { type: 'integer', minimum: 0, description: 'Still QUEUED or RUNNING.' },
  p50Ms: nullable({ type: 'number', description: 'Percentile of totalMs of the finished runs.' }),
  p95Ms: nullable({ type: 'number' }),
  p99Ms: nullable({ type: 'number' }),
};
const STATS_REQUIRED = Object.keys(statsProperties);
/** Runs accepted in a stretch of time, by outcome so far, and the latency of the finished ones. */
const StatsFigures = {
  type: 'object',
  required: STATS_REQUIRED,
  properties: statsProperties,
} as const;

const flowIdParam = { type: 'object', required: ['flowId'], properties: { flowId: { type: 'string' } } };
const bearer = [{ apiKey: [] }];
const errors = (...statuses: number[]) =>
  Object.fromEntries(statuses.map((status) => [status, { description: 'error', ...ErrorBody }]));
const json = (description: string, schema: JsonSchema) => ({ description, ...schema });

const WEBHOOK_REQUEST_NOTE =
  "The flow's trigger sees the whole request: `method`, `headers` (lower-cased names), `query`, " +
  '`body` (parsed) and `rawBody` (as sent; base64 when `rawBodyEncoding` is `base64`). ' +
  'Templates read them as `{{trigger.headers.x}}`, `{{trigger.query.x}}`, `{{trigger.body.x}}`; ' +
  "`{{trigger.x}}` is the body's `x`.";

const webhookQuery: JsonSchema = {
  type: 'object',
  description: 'Any parameters; a repeated one reaches the flow as an array of its values.',
  additionalProperties: { anyOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' } }] },
};

/** Documentation only (the validator is off): every content type is taken, within the body limit. */
const webhookBody: JsonSchema = {
  content: {
    'application/json': {
      schema: { type: 'object', description: 'A JSON object: `body` is the object, `rawBody` its text.' },
    },
    'application/x-www-form-urlencoded': {
      schema: {
        type: 'object',
        description: '`body` holds the fields; a repeated key holds an array of its values.',
      },
    },
    'text/plain': {
      schema: { type: 'string', description: 'Any `text/*`: `body` and `rawBody` are the text.' },
    },
    'application/octet-stream': {
      schema: {
        type: 'string',
        format: 'binary',
        description: 'Any other type: `body` is null, `rawBody` the bytes in base64.',
      },
    },
  },
};

/** Refused by the server before any route, in fastify's own words (not an ErrorBody). */
const serverLimits = {
  414: { description: 'A flow id longer than 100 characters (fastify maxParamLength).' },
  431: {
    description: 'Headers and request line (a long query string included) over 16 KiB (Node maxHeaderSize).',
  },
};

const webhookAccepted = json('Accepted.', {
  type: 'object',
  required: ['runId'],
  properties: { runId: { type: 'string', format: 'uuid' } },
});

/** Each public route's `schema` option: summary, tag, auth, request and responses. */
export const ROUTE_SCHEMAS = {
  webhookSync: {
    tags: ['webhooks'],
    summary: "Runs the flow and answers with its response step's status, headers and body.",
    description: WEBHOOK_REQUEST_NOTE,
    params: flowIdParam,
    querystring: webhookQuery,
    body: webhookBody,
    response: {
      200: { description: "The flow's own response (its status, headers and body)." },
      ...errors(400, 404, 413, 429, 500, 502, 503, 504),
      ...serverLimits,
    },
  },
  webhookSyncGet: {
    tags: ['webhooks'],
    summary: "Runs the flow with the query string (no body) and answers with its response step's answer.",
    description: WEBHOOK_REQUEST_NOTE,
    params: flowIdParam,
    querystring: webhookQuery,
    response: {
      200: { description: "The flow's own response (its status, headers and body)." },
      ...errors(400, 404, 429, 500, 502, 503, 504),
      ...serverLimits,
    },
  },
  webhookAsync: {
    tags: ['webhooks'],
    summary: 'Accepts a run and answers at once with its id; read it with GET /v1/runs/{runId}.',
    description: WEBHOOK_REQUEST_NOTE,
    params: flowIdParam,
    querystring: webhookQuery,
    body: webhookBody,
    response: {
      202: webhookAccepted,
      ...errors(400, 404, 413, 429, 503),
      ...serverLimits,
    },
  },
  webhookAsyncGet: {
    tags: ['webhooks'],
    summary: 'Accepts a run of the query string (no body) and answers at once with its id.',
    description: WEBHOOK_REQUEST_NOTE,
    params: flowIdParam,
    querystring: webhookQuery,
    response: {
      202: webhookAccepted,
      ...errors(400, 404, 429, 503),
      ...serverLimits,
    },
  },
  createFlow: {
    tags: ['flows'],
    summary: 'Creates a flow with its version 1, published when asked.',
    security: bearer,
    body: {
      type: 'object',
      required: ['name', 'definition'],
      properties: {
        id: { type: 'string', pattern: '^[a-z0-9][a-z0-9-]{2,62}$' },
        name: { type: 'string', minLength: 1, maxLength: 200 },
        definition: fromZod(FlowDefinitionSchema),
        publish: { type: 'boolean', default: false },
      },
    },
    response: {
      201: json('Created.', {
        type: 'object',
        required: ['flow', 'version'],
        properties: { flow: FlowView, version: VersionView },
      }),
      ...errors(400, 401),
    },
  },
  listFlows: {
    tags: ['flows'],
    summary: 'Every flow.',
    security: bearer,
    response: {
      200: json('The flows.', {
        type: 'object',
        required: ['flows'],
        properties: { flows: { type: 'array', items: FlowView } },
      }),
      ...errors(401),
    },
  },
  getFlow: {
    tags: ['flows'],
    summary: 'One flow.',
    security: bearer,
    params: flowIdParam,
    response: { 200: json('The flow.', FlowView), ...errors(401, 404) },
  },
  updateFlow: {
    tags: ['flows'],
    summary: 'Renames, enables or disables a flow (a disabled flow answers its webhooks 404).',
    security: bearer,
    params: flowIdParam,
    body: {
      type: 'object',
      properties: { name: { type: 'string', minLength: 1, maxLength: 200 }, enabled: { type: 'boolean' } },
      minProperties: 1,
    },
    response: { 200: json('The flow as changed.', FlowView), ...errors(400, 401, 404) },
  },
  deleteFlow: {
    tags: ['flows'],
    summary:
      'Deletes a flow: its webhooks answer 404 at once on every app; its runs stay readable until retention (RUN_RETENTION_DAYS) takes them, and its versions stay for them. The id stays taken.',
    security: bearer,
    params: flowIdParam,
    response: { 204: { description: 'Deleted.', type: 'null' }, ...errors(401, 404) },
  },
  listVersions: {
    tags: ['flows'],
    summary: "A flow's versions.",
    security: bearer,
    params: flowIdParam,
    response: {
      200: json('The versions.', {
        type: 'object',
        required: ['versions'],
        properties: { versions: { type: 'array', items: VersionView } },
      }),
      ...errors(401, 404),
    },
  },
  addVersion: {
    tags: ['flows'],
    summary: 'Adds a version to a flow, published when asked.',
    security: bearer,
    params: flowIdParam,
    body: {
      type: 'object',
      required: ['definition'],
      properties: { definition: fromZod(FlowDefinitionSchema), publish: { type: 'boolean', default: false } },
    },
    response: {
      201: json('Created.', { type: 'object', required: ['version'], properties: { version: VersionView } }),
      ...errors(400, 401, 404),
    },
  },
  publishVersion: {
    tags: ['flows'],
    summary: "Publishes a version: builds its bundle and makes it the flow's live version.",
    security: bearer,
    params: {
      type: 'object',
      required: ['flowId', 'versionId'],
      properties: { flowId: { type: 'string' }, versionId: { type: 'string' } },
    },
    response: {
      200: json('Published.', {
        type: 'object',
        required: ['version'],
        properties: { version: VersionView },
      }),
      ...errors(401, 404),
    },
  },
  getRun: {
    tags: ['runs'],
    summary: 'One run: status, steps, error, latency anatomy and a presigned link to its log.',
    security: bearer,
    params: { type: 'object', required: ['runId'], properties: { runId: { type: 'string' } } },
    response: { 200: json('The run.', RunView), ...errors(401, 404) },
  },
  rerunRun: {
    tags: ['runs'],
    summary:
      "Starts a new run of the run's flow version with the same trigger request, asynchronously; the new run's `rerunOf` names this one. 410 when the request is gone (retention deleted the run, or it predates kept requests).",
    security: bearer,
    params: { type: 'object', required: ['runId'], properties: { runId: { type: 'string' } } },
    response: {
      202: json('The new run, accepted.', {
        type: 'object',
        required: ['runId', 'rerunOf'],
        properties: {
          runId: { type: 'string', format: 'uuid' },
          rerunOf: { type: 'string', format: 'uuid' },
        },
      }),
      ...errors(401, 404, 410, 503),
    },
  },
  listRuns: {
    tags: ['runs'],
    summary:
      'Runs without their steps, one page at a time (pass `nextCursor` back as `cursor`), filtered by flow, status and start; oldest first unless `order=newest`.',
    security: bearer,
    querystring: {
      type: 'object',
      properties: {
        flowId: { type: 'string' },
        status: fromZod(RunStatusSchema),
        since: { ...dateTime, description: 'Only runs created at or after this moment.' },
        order: { enum: ['oldest', 'newest'], default: 'oldest' },
        cursor: { type: 'string', description: 'The `nextCursor` of the previous page.' },
        limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 100 },
      },
    },
    response: {
      200: json('A page of runs.', {
        type: 'object',
        required: ['runs', 'nextCursor'],
        properties: {
          runs: { type: 'array', items: RunSummary },
          nextCursor: {
            description: "The next page's cursor; null when this page holds the last runs there are now.",
            ...nullable({ type: 'string' }),
          },
        },
      }),
      ...errors(400, 401),
    },
  },
  runStats: {
    tags: ['runs'],
    summary:
      'Throughput and latency percentiles of the runs accepted in the last `windowSeconds`, per `bucketSeconds` and in total, from Postgres (every app instance).',
    security: bearer,
    querystring: {
      type: 'object',
      properties: {
        flowId: { type: 'string' },
        windowSeconds: { type: 'integer', minimum: 10, maximum: 86_400, default: 300 },
        bucketSeconds: {
          type: 'integer',
          minimum: 1,
          maximum: 3_600,
          default: 5,
          description: 'At most 720 buckets: windowSeconds / bucketSeconds <= 720.',
        },
      },
    },
    response: {
      200: json('Figures per bucket, oldest first, empty buckets included.', {
        type: 'object',
        required: ['now', 'windowSeconds', 'bucketSeconds', 'buckets', 'total'],
        additionalProperties: false,
        properties: {
          now: dateTime,
          windowSeconds: { type: 'integer' },
          bucketSeconds: { type: 'integer' },
          buckets: {
            type: 'array',
            items: {
              ...StatsFigures,
              required: ['start', ...STATS_REQUIRED],
              properties: { start: dateTime, ...StatsFigures.properties },
            },
          },
          total: StatsFigures,
        },
      }),
      ...errors(400, 401),
    },
  },
  live: {
    tags: ['health'],
    summary: 'The process answers.',
    response: {
      200: json('Alive.', { type: 'object', required: ['status'], properties: { status: { const: 'ok' } } }),
    },
  },
  ready: {
    tags: ['health'],
    summary: 'Postgres and Redis answer; with the number of connected workers.',
    response: Object.fromEntries(
      [200, 503].map((status) => [
        status,
        json(status === 200 ? 'Ready.' : 'Not ready.', {
          type: 'object',
          required: ['status', 'database', 'redis', 'workers'],
          properties: {
            status: { enum: ['ok', 'unavailable', 'draining'] },
            database: { type: 'string' },
            redis: { type: 'string' },
            workers: { type: 'integer', minimum: 0 },
          },
        }),
      ]),
    ),
  },
  metrics: {
    tags: ['health'],
    summary:
      'Prometheus metrics (text format 0.0.4); behind `authorization: Bearer <METRICS_TOKEN>` when that is set.',
    response: {
      200: { description: 'Metrics.', content: { 'text/plain': { schema: { type: 'string' } } } },
      ...errors(401),
    },
  },
} as const;
