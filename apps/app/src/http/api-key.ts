import { createHash, timingSafeEqual } from 'node:crypto';
import { FlowboxError } from '@flowbox/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ApiKeyFailures } from './api-key-failures.ts';

/**
 * An `onRequest` hook for the management API: `authorization: Bearer <API_KEY>` or
 * `x-api-key: <API_KEY>`. Compared as sha256 digests in constant time, so neither the key's
 * content nor its length leaks through timing. A wrong key is answered by `failures` (counted per
 * address, 401 then 429); a missing one 401.
 */
export function requireApiKey(
  apiKey: string,
  failures: ApiKeyFailures,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  const expected = digest(apiKey);
  return async (request, reply) => {
    const header = request.headers.authorization;
    const presented = header?.startsWith('Bearer ')
      ? header.slice('Bearer '.length)
      : request.headers['x-api-key'];
    if (typeof presented !== 'string' || presented === '') {
      throw new FlowboxError(
        'UNAUTHORIZED',
        'this route needs the API key: authorization: Bearer <API_KEY>, or x-api-key: <API_KEY>',
      );
    }
    if (!timingSafeEqual(digest(presented), expected)) return failures.refuse(request, reply);
    return undefined;
  };
}

/**
 * An `onRequest` hook for `GET /metrics` when METRICS_TOKEN is set: `authorization: Bearer
 * <METRICS_TOKEN>`, compared like the API key; a wrong token is answered by `failures` (counted
 * per address like wrong API keys, 401 then 429), a missing one 401.
 */
export function requireMetricsToken(
  token: string,
  failures: ApiKeyFailures,
): (request: FastifyRequest, reply: FastifyReply) => Promise<FastifyReply | undefined> {
  const expected = digest(token);
  return async (request, reply) => {
    const header = request.headers.authorization;
    if (header === undefined || !header.startsWith('Bearer ')) {
      throw new FlowboxError(
        'UNAUTHORIZED',
        '/metrics needs its token: authorization: Bearer <METRICS_TOKEN>',
      );
    }
    if (!timingSafeEqual(digest(header.slice('Bearer '.length)), expected))
      return failures.refuse(request, reply);
    return undefined;
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
