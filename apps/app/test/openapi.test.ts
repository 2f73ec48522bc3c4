import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { API_OPERATIONS } from '../src/http/api-operations.ts';
import { API_VERSION, buildOpenApiDocument, openApiPath } from '../src/http/openapi-document.ts';
import { startTestApp, TEST_API_KEY } from './app-harness.ts';
import { goodPiece } from './piece-archives.ts';

interface Media {
  schema: object;
  example?: unknown;
}
interface Operation {
  operationId: string;
  security?: unknown[];
  requestBody?: { content: Record<string, Media> };
  responses: Record<string, { content?: Record<string, Media> }>;
}
interface OpenApiDocument {
  openapi: string;
  security: unknown[];
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, object> };
}

describe('the OpenAPI document (GET /v1/openapi.json)', () => {
  let app: FlowboxApp;
  let url: string;
  let spec: OpenApiDocument;
  const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ WEBHOOK_TIMEOUT_SECONDS: '1' }));
    spec = (await (await fetch(`${url}/v1/openapi.json`)).json()) as OpenApiDocument;
  });

  /** A schema of the document, checkable alone: its `#/components/...` refs resolve in it. */
  const compile = (schema: object) => ajv.compile({ ...schema, components: spec.components });
  afterAll(async () => {
    await app.close();
  });

  /** Sends a request and checks its answer against the document's schema for that status. */
  async function call(
    method: string,
    route: string,
    path: string,
    body?: unknown,
    auth: 'bearer' | 'x-api-key' | 'none' = 'bearer',
  ) {
    const headers: Record<string, string> = {};
    if (auth === 'bearer') headers.authorization = `Bearer ${TEST_API_KEY}`;
    if (auth === 'x-api-key') headers['x-api-key'] = TEST_API_KEY;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await fetch(`${url}${path}`, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    const operation = spec.paths[openApiPath(route)]?.[method.toLowerCase()];
    expect(operation, `${method} ${route} is in the document`).toBeDefined();
    const documented = operation?.responses[String(response.status)];
    expect(
      documented,
      `${method} ${route} documents status ${response.status}: ${text.slice(0, 200)}`,
    ).toBeDefined();
    const schema = documented?.content?.['application/json']?.schema;
    const json: unknown = text === '' ? undefined : JSON.parse(text);
    if (schema !== undefined) {
      const validate = compile(schema);
      expect(
        validate(json),
        `${method} ${path} → ${response.status}: ${JSON.stringify(validate.errors)}`,
      ).toBe(true);
    }
    return { status: response.status, json: json as Record<string, unknown> };
  }

  it('is OpenAPI 3.1 and holds every route but the internal ones', () => {
    expect(spec.openapi).toBe('3.1.0');
    const internal = (route: { url: string; hidden: boolean }) =>
      route.hidden || route.url.startsWith('/v1/engine/') || route.url.startsWith('/v1/docs');
    const publicRoutes = app.routes.filter((route) => !internal(route));
    // Webhooks (2, each POST and GET), flows (9), manual runs (2), a flow's schedule, a flow's polls, a step test, runs (4), wait URLs (4, each POST and GET), pieces (4), connections (5), health (2), metrics, the document.
    expect(publicRoutes.length).toBe(43);
    const missing = publicRoutes.filter(
      (route) => spec.paths[openApiPath(route.url)]?.[route.method.toLowerCase()] === undefined,
    );
    expect(missing).toEqual([]);
    // A webhook documents every body it takes.
    const webhook = spec.paths['/v1/webhooks/{flowId}']?.post as unknown as {
      requestBody?: { content: Record<string, unknown> };
    };
    expect(Object.keys(webhook.requestBody?.content ?? {}).sort()).toEqual([
      'application/json',
      'application/octet-stream',
      'application/x-www-form-urlencoded',
      'text/plain',
    ]);
    // And the engine's callbacks are not advertised.
    expect(Object.keys(spec.paths).filter((path) => path.startsWith('/v1/engine'))).toEqual([]);
  });

  it('answers every route the way it documents', async () => {
    const created = await call('POST', '/v1/flows', '/v1/flows', {
      id: 'documented',
      name: 'documented',
      definition: BENCHMARK_FLOW,
      publish: true,
    });
    expect(created.status).toBe(201);
    await call('POST', '/v1/flows', '/v1/flows', { name: '' });
    await call('GET', '/v1/flows', '/v1/flows');
    expect((await call('GET', '/v1/flows', '/v1/flows', undefined, 'none')).status).toBe(401);
    expect((await call('GET', '/v1/flows', '/v1/flows', undefined, 'x-api-key')).status).toBe(200);
    await call('GET', '/v1/pieces', '/v1/pieces');
    await call('GET', '/v1/pieces/:name', '/v1/pieces/webhook');
    await call('GET', '/v1/pieces/:name', '/v1/pieces/no-such-piece');
    await call('POST', '/v1/pieces', '/v1/pieces', { manifest: {}, archive: '' });
    expect(
      (await call('POST', '/v1/pieces', '/v1/pieces', goodPiece({ name: 'webhook', version: '9.0.0' })))
        .status,
    ).toBe(403);
    // The flow created above pins math-helper: a yank is refused naming it.
    expect((await call('DELETE', '/v1/pieces/:name/:version', '/v1/pieces/math-helper/0.1.0')).status).toBe(
      409,
    );
    expect((await call('DELETE', '/v1/pieces/:name/:version', '/v1/pieces/math-helper/9.9.9')).status).toBe(
      404,
    );
    await call('GET', '/v1/flows/:flowId', '/v1/flows/documented');
    await call('GET', '/v1/flows/:flowId', '/v1/flows/no-such-flow');
    await call('PATCH', '/v1/flows/:flowId', '/v1/flows/documented', { name: 'renamed' });
    const versions = await call('GET', '/v1/flows/:flowId/versions', '/v1/flows/documented/versions');
    const added = await call('POST', '/v1/flows/:flowId/versions', '/v1/flows/documented/versions', {
      definition: BENCHMARK_FLOW,
    });
    expect(added.status).toBe(201);
    const versionId = (added.json.version as { id: string }).id;
    await call(
      'POST',
      '/v1/flows/:flowId/versions/:versionId/publish',
      `/v1/flows/documented/versions/${versionId}/publish`,
    );
    expect((versions.json.versions as unknown[]).length).toBe(1);

    const accepted = await call('POST', '/v1/webhooks/:flowId', '/v1/webhooks/documented', { a: 1 });
    expect(accepted.status).toBe(202);
    expect((await call('POST', '/v1/webhooks/:flowId', '/v1/webhooks/documented', { a: 2 })).status).toBe(
      202,
    );
    await call('POST', '/v1/webhooks/:flowId', '/v1/webhooks/no-such-flow', {});
    expect((await call('GET', '/v1/webhooks/:flowId', '/v1/webhooks/documented?a=1&a=2')).status).toBe(202);
    // No worker runs it: the sync caller gets the documented 504 (and its run ends CALLER_GONE).
    expect((await call('POST', '/v1/webhooks/:flowId/sync', '/v1/webhooks/documented/sync', {})).status).toBe(
      504,
    );
    const stepTest = '/v1/flows/:flowId/steps/:stepName/test';
    expect((await call('POST', stepTest, '/v1/flows/documented/steps/nope/test', { data: {} })).status).toBe(
      404,
    );
    expect(
      (await call('POST', stepTest, '/v1/flows/documented/steps/step_1/test', { data: [] })).status,
    ).toBe(400);
    // No worker runs it: the documented 504.
    expect(
      (await call('POST', stepTest, '/v1/flows/documented/steps/step_1/test', { data: {} })).status,
    ).toBe(504);
    const runId = String(accepted.json.runId);
    await call('GET', '/v1/runs/:runId', `/v1/runs/${runId}`);
    await call('GET', '/v1/runs/:runId', '/v1/runs/00000000-0000-4000-8000-000000000000');
    await call('GET', '/v1/runs', '/v1/runs?flowId=documented');
    await call('GET', '/v1/runs', '/v1/runs?limit=0');
    const page = await call('GET', '/v1/runs', '/v1/runs?order=newest&status=QUEUED&limit=1');
    expect(page.json.nextCursor).toEqual(expect.any(String));
    await call('GET', '/v1/runs', `/v1/runs?order=newest&cursor=${String(page.json.nextCursor)}`);
    await call('GET', '/v1/runs', '/v1/runs?cursor=not-a-cursor');
    await call('GET', '/v1/runs/stats', '/v1/runs/stats?windowSeconds=60&bucketSeconds=5');
    await call('GET', '/v1/runs/stats', '/v1/runs/stats?flowId=documented');
    await call('GET', '/v1/runs/stats', '/v1/runs/stats?windowSeconds=86400&bucketSeconds=1');
    const rerun = await call('POST', '/v1/runs/:runId/rerun', `/v1/runs/${runId}/rerun`);
    expect(rerun.status).toBe(202);
    await call('POST', '/v1/runs/:runId/rerun', '/v1/runs/00000000-0000-4000-8000-000000000000/rerun');
    await call('GET', '/v1/runs/:runId', `/v1/runs/${String(rerun.json.runId)}`);
    expect((await call('DELETE', '/v1/flows/:flowId', '/v1/flows/documented')).status).toBe(204);
    await call('DELETE', '/v1/flows/:flowId', '/v1/flows/documented');
    expect((await call('POST', '/v1/webhooks/:flowId', '/v1/webhooks/documented', {})).status).toBe(404);
    await call('GET', '/v1/runs/:runId', `/v1/runs/${runId}`);
    await call('GET', '/health/live', '/health/live');
    await call('GET', '/health/ready', '/health/ready');
    await call('GET', '/v1/openapi.json', '/v1/openapi.json', undefined, 'none');
  });

  it('is docs/openapi.json, built from the route table alone', () => {
    expect(spec).toEqual(buildOpenApiDocument(API_VERSION));
  });

  it('names each operation once, with its auth and an example that fits its schema', () => {
    const operations = Object.values(spec.paths).flatMap((path) => Object.values(path));
    const ids = operations.map((operation) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids.sort()).toEqual(Object.keys(API_OPERATIONS).sort());
    expect(spec.security).toEqual([{ bearerAuth: [] }, { apiKeyHeader: [] }]);
    for (const operation of operations) {
      const keyed = operation.security === undefined;
      // Keyed operations answer 401 without the key; public ones say they need none.
      if (keyed) expect(operation.responses['401'], operation.operationId).toBeDefined();
      else expect(operation.security?.length === 0 || operation.operationId === 'getMetrics').toBe(true);
      const media = [
        ...Object.values(operation.requestBody?.content ?? {}),
        ...Object.values(operation.responses).flatMap((response) => Object.values(response.content ?? {})),
      ];
      const examples = media.filter((m) => m.example !== undefined);
      expect(examples.length, `${operation.operationId} has an example`).toBeGreaterThan(0);
      for (const { schema, example } of examples) {
        const validate = compile(schema);
        expect(validate(example), `${operation.operationId}: ${JSON.stringify(validate.errors)}`).toBe(true);
      }
    }
    for (const route of [
      '/health/live',
      '/health/ready',
      '/v1/webhooks/{flowId}',
      '/v1/webhooks/{flowId}/sync',
    ]) {
      for (const operation of Object.values(spec.paths[route] ?? {})) expect(operation.security).toEqual([]);
    }
  });

  it('serves a docs page for it', async () => {
    const response = await fetch(`${url}/v1/docs/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('swagger');
  });
});
