import { describe, expect, it } from 'vitest';
import {
  isRestrictedResponseHeader,
  parseAllowedResponseHeaders,
  responsePolicyProblem,
} from './response-header-policy.ts';

const response = (headers: Record<string, string>, status = 200) => ({ status, headers, body: null });

describe('response header policy', () => {
  it('restricts cookies, CORS and the security headers, in any case', () => {
    for (const name of [
      'set-cookie',
      'Set-Cookie',
      'access-control-allow-origin',
      'Access-Control-Allow-Credentials',
      'access-control-expose-headers',
      'content-security-policy',
      'strict-transport-security',
      'x-frame-options',
      'x-content-type-options',
      'clear-site-data',
      'cross-origin-opener-policy',
      'NEL',
      'report-to',
      'reporting-endpoints',
      'alt-svc',
    ]) {
      expect(isRestrictedResponseHeader(name), name).toBe(true);
    }
    for (const name of ['content-type', 'cache-control', 'location', 'etag', 'x-request-id', 'vary']) {
      expect(isRestrictedResponseHeader(name), name).toBe(false);
    }
  });

  it('refuses a restricted header by name unless the setting allows it', () => {
    const none = parseAllowedResponseHeaders('');
    expect(responsePolicyProblem(response({ 'content-type': 'text/plain' }), none)).toBeNull();
    expect(responsePolicyProblem(response({ 'Set-Cookie': 'a=1; Path=/inspector' }), none)).toBe(
      `header "Set-Cookie" acts on the app's origin and is refused from flow responses (WEBHOOK_RESPONSE_ALLOWED_HEADERS can allow it)`,
    );
    const allowed = parseAllowedResponseHeaders(' Access-Control-Allow-Origin , set-cookie,');
    expect([...allowed]).toEqual(['access-control-allow-origin', 'set-cookie']);
    expect(
      responsePolicyProblem(response({ 'access-control-allow-origin': '*', 'set-cookie': 'a=1' }), allowed),
    ).toBeNull();
    expect(responsePolicyProblem(response({ 'access-control-allow-credentials': 'true' }), allowed)).toMatch(
      /"access-control-allow-credentials" acts on the app's origin/,
    );
  });

  it('checks the status and header syntax first', () => {
    const none = parseAllowedResponseHeaders('');
    expect(responsePolicyProblem(response({}, 101), none)).toMatch(/status 101 is not a final HTTP status/);
    expect(responsePolicyProblem(response({ 'x-a': 'b\r\nc' }), none)).toMatch(/header "x-a" has a value/);
  });
});
