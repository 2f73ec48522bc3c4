import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { FlowboxApp } from '../src/app.ts';
import { startTestApp, TEST_API_KEY } from './app-harness.ts';

interface OpenApiDocument {
  openapi: string;
  paths: Record<
    string,
    Record<string, { responses: Record<string, { content?: Record<string, { schema: object }> }> }>
  >;
}

/** fastify's `/v1/flows/:flowId` as OpenAPI writes it: `/v1/flows/{flowId}`. */
const openApiPath = (url: string) => url.replaceAll(/:([A-Za-z]+)/g, '{$1}');

describe('the OpenAPI document (GET /v1/openapi.json)', () => {
  let app: FlowboxApp;
  let url: string;
  let spec: OpenApiDocument;
  const ajv = addFormats.default(new Ajv2020({ strict: false, allErrors: true }));

  beforeAll(async () => {
    ({ app, url } = await startTestApp({ WEBHOOK_TIMEOUT_SECONDS: '1' }));
    spec = (await (await fetch(`${url}/v1/openapi.json`)).json()) as OpenApiDocument;
  });
  afterAll(async () => {
    await app.close();
  });

  /** Sends a request and checks its answer against the document's schema for that status. */
  async function call(method: string, route: string, path: string, body?: unknown, auth = true) {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${TEST_API_KEY}`;
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
      const validate = ajv.compile(schema);
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
    // Webhooks (2, each POST and GET), flows (8), runs (4), health (2), metrics.
    expect(publicRoutes.length).toBe(19);
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
    await call('GET', '/v1/flows', '/v1/flows', undefined, false);
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
  });

  it('serves a docs page for it', async () => {
    const response = await fetch(`${url}/v1/docs/`);
    expect(response.status).toBe(200);
    expect(await response.text()).toContain('swagger');
  });
});
