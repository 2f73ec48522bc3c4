import { createHash, timingSafeEqual } from 'node:crypto';
import { FlowboxError } from '@flowbox/protocol';
import type { FastifyRequest } from 'fastify';

/**
 * An `onRequest` hook for the management API: `authorization: Bearer <API_KEY>` or
 * `x-api-key: <API_KEY>`. Compared as sha256 digests in constant time, so neither the key's
 * content nor its length leaks through timing.
 */
export function requireApiKey(apiKey: string): (request: FastifyRequest) => Promise<void> {
  const expected = digest(apiKey);
  return async (request) => {
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
    if (!timingSafeEqual(digest(presented), expected))
      throw new FlowboxError('UNAUTHORIZED', 'wrong API key');
  };
}

/**
 * An `onRequest` hook for `GET /metrics` when METRICS_TOKEN is set: `authorization: Bearer
 * <METRICS_TOKEN>`, compared like the API key.
 */
export function requireMetricsToken(token: string): (request: FastifyRequest) => Promise<void> {
  const expected = digest(token);
  return async (request) => {
    const header = request.headers.authorization;
    if (header === undefined || !header.startsWith('Bearer ')) {
      throw new FlowboxError(
        'UNAUTHORIZED',
        '/metrics needs its token: authorization: Bearer <METRICS_TOKEN>',
      );
    }
    if (!timingSafeEqual(digest(header.slice('Bearer '.length)), expected))
      throw new FlowboxError('UNAUTHORIZED', 'wrong metrics token');
  };
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}
