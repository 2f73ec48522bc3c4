import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { API_OPERATIONS } from './api-operations.ts';
import { buildOpenApiDocument } from './openapi-document.ts';
import { apiRoute, viewSerializerCompiler } from './view-serializer.ts';

export const DOCS_PATH = '/v1/docs';

/** A route as registered, filled in as routes are added (openapi.test.ts compares them). */
export interface ApiRoute {
  method: string;
  url: string;
  /** Kept out of the document on purpose (the Swagger UI page and its assets). */
  hidden: boolean;
}

/**
 * Serves the OpenAPI document (openapi-document.ts: built from API_OPERATIONS, the same as
 * docs/openapi.json) at /v1/openapi.json, with Swagger UI at
 * /v1/docs, and serializes every answer through its route's view (view-serializer.ts). Register
 * it before the routes: it records them as they are added, for openapi.test.ts.
 */
export async function registerOpenApi(app: FastifyInstance, version: string): Promise<ApiRoute[]> {
  const routes: ApiRoute[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      if (method !== 'HEAD') routes.push({ method, url: route.url, hidden: route.schema?.hide === true });
    }
  });
  // Handlers parse requests with zod and answer in flowbox's own error format.
  app.setValidatorCompiler(() => () => true);
  app.setSerializerCompiler(viewSerializerCompiler);
  const document = buildOpenApiDocument(version);
  // Its types know OpenAPI 3.0 only; the document is 3.1, which it serves as it is.
  await app.register(swagger, { mode: 'static', specification: { document: document as never } });
  await app.register(swaggerUi, { routePrefix: DOCS_PATH });
  app.route({ ...apiRoute(API_OPERATIONS.getOpenApiDocument), handler: async () => document });
  return routes;
}
