import { createHmac } from 'node:crypto';

/**
 * HS256 JWTs minted by the tests themselves with node:crypto, so the fault tests hold the app's
 * token contract without relying on its implementation (apps/app/src/tokens.ts).
 */

export const ISSUER = 'flowbox';
export const ENGINE_AUDIENCE = 'flowbox-engine';
export const WORKER_AUDIENCE = 'flowbox-worker';

/** The header flowbox signs: `{"alg":"HS256","typ":"JWT"}`. */
export const HS256_HEADER = { alg: 'HS256', typ: 'JWT' };

const b64url = (value: unknown): string => Buffer.from(JSON.stringify(value)).toString('base64url');

export function hmacSha256(secret: string, signingInput: string): string {
  return createHmac('sha256', secret).update(signingInput).digest('base64url');
}

/** `base64url(header).base64url(payload).HMAC-SHA256(secret, both)`. */
export function signJwt(secret: string, payload: object, header: object = HS256_HEADER): string {
  const signingInput = `${b64url(header)}.${b64url(payload)}`;
  return `${signingInput}.${hmacSha256(secret, signingInput)}`;
}

/** An unsigned token: the given header (`alg: none` in its spellings) and an empty signature. */
export function unsignedJwt(payload: object, alg: string): string {
  return `${b64url({ alg, typ: 'JWT' })}.${b64url(payload)}.`;
}

const nowSeconds = () => Math.floor(Date.now() / 1000);

/** The claims of a valid engine token for `runId`, overridable one by one. */
export function engineClaims(
  runId: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const iat = nowSeconds();
  return { iss: ISSUER, aud: ENGINE_AUDIENCE, sub: runId, sid: null, iat, exp: iat + 600, ...overrides };
}

export function workerClaims(
  workerName: string,
  overrides: Record<string, unknown> = {},
): Record<string, unknown> {
  const iat = nowSeconds();
  return { iss: ISSUER, aud: WORKER_AUDIENCE, sub: workerName, iat, exp: iat + 600, ...overrides };
}

/** The payload of a JWT, decoded (no check). */
export function decodePayload(token: string): Record<string, unknown> {
  const payload = token.split('.')[1] ?? '';
  return JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Record<string, unknown>;
}

/** The token with its payload replaced and its signature kept: what a forger without the secret can do. */
export function withForgedPayload(token: string, payload: object): string {
  const [header, , signature] = token.split('.') as [string, string, string];
  return `${header}.${b64url(payload)}.${signature}`;
}

/**
 * The token with the first character of its signature changed. Not the last one: its low bits
 * are base64url padding, so changing them may leave the decoded signature as it was.
 */
export function withFlippedSignature(token: string): string {
  const [header, payload, signature] = token.split('.') as [string, string, string];
  const first = signature.startsWith('A') ? 'B' : 'A';
  return `${header}.${payload}.${first}${signature.slice(1)}`;
}
