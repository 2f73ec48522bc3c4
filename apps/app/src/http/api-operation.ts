import type { z } from 'zod';

/** Who may call an operation: the API key, anyone, or anyone unless METRICS_TOKEN is set. */
export type OperationAuth = 'apiKey' | 'public' | 'metricsToken';

export interface OperationResponse {
  description: string;
  /** The JSON body: routes serialize through it (view-serializer.ts) and the document shows it. */
  view?: z.ZodType;
  /** A non-JSON body (metrics), documented only. */
  content?: Record<string, z.ZodType>;
}

/**
 * One public route: what the document says about it and what its answers are serialized
 * through. api-operations.ts holds them all; the routes register from them (apiRoute), so a
 * route and its entry share the method and URL.
 */
export interface ApiOperation {
  operationId: string;
  method: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  /** fastify's form: `/v1/flows/:flowId`. */
  url: string;
  tag: 'webhooks' | 'flows' | 'runs' | 'waits' | 'pieces' | 'connections' | 'health' | 'document';
  summary: string;
  description?: string;
  auth: OperationAuth;
  params?: z.ZodObject;
  /** An object's properties become parameters; a record is one free-form parameter. */
  query?: z.ZodType;
  /** Request headers the operation reads, as named parameters. */
  headers?: z.ZodObject;
  /** A JSON body, or a body per media type (webhooks). */
  body?: z.ZodType | Record<string, z.ZodType>;
  /** The JSON body may be left out (its defaults apply); by default a JSON body is required. */
  bodyOptional?: boolean;
  responses: Record<number, OperationResponse>;
  /**
   * The route passes someone else's answers through (the sync webhook: its flow's status and
   * body), so nothing it sends is serialized through a view.
   */
  passThrough?: boolean;
  example: {
    request?: unknown;
    /** The status whose example `response` is. */
    status: number;
    response?: unknown;
  };
}
