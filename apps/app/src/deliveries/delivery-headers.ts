import type { IncomingHttpHeaders } from 'node:http';

/**
 * Headers that carry credentials, never kept with a refused delivery: those the run's redactor
 * hides (apps/engine/src/flows/redactor.ts SECRET_HEADERS), and any whose name says it holds a
 * signature, token, secret, key or session. The flow's own signature header is removed as the
 * row is written, whatever its name (refused-deliveries-repository.ts).
 */
const CREDENTIAL_HEADERS = new Set([
  'authorization',
  'proxy-authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
]);
const CREDENTIAL_NAME = /signature|hmac|token|secret|passw|api-?key|auth|session|cookie|credential/i;
/** A value is cut here: the record is for telling what was sent, not for replaying it. */
const MAX_VALUE_CHARS = 512;

/** The request's headers as a refused delivery keeps them: no credentials, values bounded. */
export function deliveryHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  const kept: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined || CREDENTIAL_HEADERS.has(name) || CREDENTIAL_NAME.test(name)) continue;
    const text = Array.isArray(value) ? value.join(', ') : value;
    kept[name] = text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}…` : text;
  }
  return kept;
}
