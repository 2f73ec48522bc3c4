import { FlowboxError, formatIssues } from '@flowbox/protocol';
import type { FastifySchema } from 'fastify';
import { z } from 'zod';
import type { ApiOperation } from './api-operation.ts';

/**
 * Fastify's serializer compiler for the zod views in a route's `schema.response`: an answer is
 * turned into JSON (Dates become ISO strings), parsed by its view (which drops any field the view
 * does not name) and written. An answer that does not fit its view is an internal error, not a
 * document that lies. Routes without a view for a status are written with JSON.stringify.
 */
export function viewSerializerCompiler({
  schema,
  method,
  url,
  httpStatus,
}: {
  schema: unknown;
  method: string;
  url: string;
  httpStatus?: string;
}): (data: unknown) => string {
  if (!(schema instanceof z.ZodType)) return (data) => JSON.stringify(data);
  return (data) => {
    const text = JSON.stringify(data);
    if (text === undefined) return '';
    const parsed = schema.safeParse(JSON.parse(text));
    if (!parsed.success) {
      throw new FlowboxError(
        'INTERNAL',
        `${method} ${url} ${httpStatus ?? ''}: the answer does not fit its view: ${formatIssues(parsed.error.issues)}`,
      );
    }
    return JSON.stringify(parsed.data);
  };
}

/**
 * A route's method, URL and `schema` from its operation: the answers' views by status (none for a
 * route that passes its flow's answers through). Requests are not validated here: handlers parse
 * with the same zod schemas and answer 400 INVALID_REQUEST in flowbox's words.
 */
export function apiRoute<const O extends ApiOperation>(
  operation: O,
): {
  method: O['method'];
  url: O['url'];
  schema: FastifySchema;
} {
  const response = operation.passThrough
    ? {}
    : Object.fromEntries(
        Object.entries(operation.responses).flatMap(([status, { view }]) =>
          view === undefined ? [] : [[status, view]],
        ),
      );
  return { method: operation.method, url: operation.url, schema: { response } };
}
