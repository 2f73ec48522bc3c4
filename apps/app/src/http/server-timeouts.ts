import type { ServerOptions } from 'node:http';

/**
 * The HTTP server's defence against slow clients, as Fastify options. Fastify's own default
 * `requestTimeout` is 0, which turns Node's off: a client that sends its headers and then a byte
 * a second would hold a connection for ever. Node checks its timeouts every
 * `connectionsCheckingInterval` (30 s by default), so a slow client is cut within the timeout
 * plus this interval. The timeouts cover receiving the request only: once the body is in, a
 * sync webhook may wait for its flow as long as WEBHOOK_TIMEOUT_SECONDS says.
 */
export function serverTimeouts(requestTimeoutSeconds: number): {
  requestTimeout: number;
  http: ServerOptions;
} {
  const requestTimeout = requestTimeoutSeconds * 1000;
  return {
    requestTimeout,
    http: {
      requestTimeout,
      // Node requires headersTimeout <= requestTimeout; headers alone get no longer than all.
      headersTimeout: requestTimeout,
      connectionsCheckingInterval: Math.min(CHECK_INTERVAL_MS, requestTimeout),
    },
  };
}

const CHECK_INTERVAL_MS = 1_000;
