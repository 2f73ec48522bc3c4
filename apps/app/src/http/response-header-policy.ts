import { type FlowResponse, flowResponseProblem, quoteHeaderName } from '@flowbox/protocol';

/**
 * Headers a flow's response may not set unless WEBHOOK_RESPONSE_ALLOWED_HEADERS names them. A
 * webhook answers on the app's own origin, which also serves the run inspector and its API key:
 * these headers act on that origin in a browser (cookies, what other origins may read, what may
 * run or frame it, what it clears or caches as policy, where it sends reports, which other
 * servers it trusts for it), not on the flow's content.
 */
export const RESTRICTED_RESPONSE_HEADERS: readonly string[] = [
  'set-cookie',
  'set-cookie2',
  'clear-site-data',
  'content-security-policy',
  'content-security-policy-report-only',
  'strict-transport-security',
  'x-frame-options',
  'x-content-type-options',
  'x-xss-protection',
  'x-permitted-cross-domain-policies',
  'x-dns-prefetch-control',
  'cross-origin-opener-policy',
  'cross-origin-embedder-policy',
  'cross-origin-resource-policy',
  'origin-agent-cluster',
  'permissions-policy',
  'referrer-policy',
  'service-worker-allowed',
  'timing-allow-origin',
  // Where a browser sends the origin's reports (network errors, policy violations) and for how long.
  'nel',
  'report-to',
  'reporting-endpoints',
  // Another host:port a browser may use for the origin, for as long as it says.
  'alt-svc',
];
/** Every CORS response header (`access-control-allow-origin`, `-allow-credentials`, …). */
export const RESTRICTED_RESPONSE_HEADER_PREFIX = 'access-control-';

export function isRestrictedResponseHeader(name: string): boolean {
  const lower = name.toLowerCase();
  return lower.startsWith(RESTRICTED_RESPONSE_HEADER_PREFIX) || RESTRICTED_RESPONSE_HEADERS.includes(lower);
}

/** WEBHOOK_RESPONSE_ALLOWED_HEADERS (comma-separated names) as the lower-case set it means. */
export function parseAllowedResponseHeaders(text: string): ReadonlySet<string> {
  return new Set(
    text
      .split(',')
      .map((name) => name.trim().toLowerCase())
      .filter((name) => name !== ''),
  );
}

/**
 * Why the app will not send this flow response, or null when it will: a status or header that
 * cannot be sent (response-rules.ts), or a restricted header the setting does not allow.
 */
export function responsePolicyProblem(response: FlowResponse, allowed: ReadonlySet<string>): string | null {
  const problem = flowResponseProblem(response);
  if (problem !== null) return problem;
  for (const name of Object.keys(response.headers)) {
    if (isRestrictedResponseHeader(name) && !allowed.has(name.toLowerCase())) {
      return `header ${quoteHeaderName(name)} acts on the app's origin and is refused from flow responses (WEBHOOK_RESPONSE_ALLOWED_HEADERS can allow it)`;
    }
  }
  return null;
}
