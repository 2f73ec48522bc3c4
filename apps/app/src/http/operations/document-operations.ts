import { z } from 'zod';
import type { ApiOperation } from '../api-operation.ts';

const OpenApiDocumentView = z
  .object({ openapi: z.string(), info: z.record(z.string(), z.unknown()) })
  .catchall(z.unknown())
  .meta({ id: 'OpenApiDocument', description: 'An OpenAPI 3.1 document (docs/openapi.json).' });

/** This document, served by the app (public: a client generator reads it). */
export const DOCUMENT_OPERATIONS = {
  getOpenApiDocument: {
    operationId: 'getOpenApiDocument',
    method: 'GET',
    url: '/v1/openapi.json',
    tag: 'document',
    summary: 'This OpenAPI 3.1 document (the same as docs/openapi.json); Swagger UI on it at /v1/docs.',
    auth: 'public',
    // The document is built once at start from the same table; nothing to check it against.
    passThrough: true,
    responses: { 200: { description: 'The document.', view: OpenApiDocumentView } },
    example: {
      status: 200,
      response: { openapi: '3.1.0', info: { title: 'flowbox', version: '1.0.0' }, paths: {} },
    },
  },
} as const satisfies Record<string, ApiOperation>;
