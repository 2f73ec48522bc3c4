import { createHmac, createSecretKey, type KeyObject, timingSafeEqual } from 'node:crypto';
import { FlowboxError } from '@flowbox/protocol';

const ISSUER = 'flowbox';
const ENGINE_AUDIENCE = 'flowbox-engine';
const WORKER_AUDIENCE = 'flowbox-worker';
/** The only header flowbox signs or accepts: HS256, nothing to negotiate. */
const HEADER = Buffer.from(JSON.stringify({ alg: 'HS256', typ: 'JWT' })).toString('base64url');
/** Tolerated clock difference between app instances, in seconds. */
const CLOCK_SKEW_SECONDS = 5;

export interface EngineTokenClaims {
  runId: string;
  /** The app instance holding the sync caller's connection, or null for async runs. */
  syncInstanceId: string | null;
}

interface Claims {
  iss: string;
  aud: string;
  sub: string;
  iat: number;
  exp: number;
  sid?: string | null;
}

/**
 * HS256 JWTs for the two kinds of caller the app does not trust with credentials: a worker
 * (may poll for jobs) and an engine (may report on exactly one run until shortly after its
 * timeout). Signed and verified with node:crypto's HMAC, synchronously: an engine token is
 * checked on every callback, and WebCrypto's asynchronous path cost about 2 ms of app CPU per
 * run. The header must be exactly flowbox's own, so `alg: none` and algorithm swaps are refused
 * before any claim is read.
 */
export class TokenService {
  /** A KeyObject, made once: HMAC with a raw Buffer key builds one per call (5x slower). */
  readonly #secret: KeyObject;

  constructor(secret: string) {
    this.#secret = createSecretKey(Buffer.from(secret, 'utf8'));
  }

  signEngineToken(claims: EngineTokenClaims, ttlSeconds: number): string {
    return this.#sign(ENGINE_AUDIENCE, claims.runId, ttlSeconds, { sid: claims.syncInstanceId });
  }

  verifyEngineToken(token: string): EngineTokenClaims {
    const claims = this.#verify(token, ENGINE_AUDIENCE);
    const sid = claims.sid;
    if (sid === undefined || (sid !== null && typeof sid !== 'string')) {
      throw new FlowboxError('UNAUTHORIZED', 'engine token is missing its run claims');
    }
    return { runId: claims.sub, syncInstanceId: sid };
  }

  signWorkerToken(workerName: string, ttlSeconds: number): string {
    return this.#sign(WORKER_AUDIENCE, workerName, ttlSeconds, {});
  }

  verifyWorkerToken(token: string): { workerName: string } {
    return { workerName: this.#verify(token, WORKER_AUDIENCE).sub };
  }

  #sign(audience: string, subject: string, ttlSeconds: number, extra: { sid?: string | null }): string {
    const iat = Math.floor(Date.now() / 1000);
    const claims: Claims = { iss: ISSUER, aud: audience, sub: subject, iat, exp: iat + ttlSeconds, ...extra };
    const signingInput = `${HEADER}.${Buffer.from(JSON.stringify(claims)).toString('base64url')}`;
    return `${signingInput}.${this.#mac(signingInput).toString('base64url')}`;
  }

  #verify(token: string, audience: string): Claims {
    const parts = token.split('.');
    if (parts.length !== 3 || parts[0] !== HEADER) throw invalid();
    const [header, payload, signature] = parts as [string, string, string];
    const expected = this.#mac(`${header}.${payload}`);
    const given = Buffer.from(signature, 'base64url');
    if (given.byteLength !== expected.byteLength || !timingSafeEqual(given, expected)) throw invalid();
    let claims: Partial<Claims>;
    try {
      claims = JSON.parse(Buffer.from(payload, 'base64url').toString('utf8')) as Partial<Claims>;
    } catch {
      throw invalid();
    }
    if (claims.iss !== ISSUER || claims.aud !== audience || typeof claims.sub !== 'string') throw invalid();
    if (typeof claims.exp !== 'number' || typeof claims.iat !== 'number') throw invalid();
    const now = Date.now() / 1000;
    if (claims.exp <= now - CLOCK_SKEW_SECONDS) throw new FlowboxError('UNAUTHORIZED', 'token expired');
    if (claims.iat > now + CLOCK_SKEW_SECONDS) throw invalid();
    return claims as Claims;
  }

  #mac(signingInput: string): Buffer {
    return createHmac('sha256', this.#secret).update(signingInput).digest();
  }
}

function invalid(): FlowboxError {
  return new FlowboxError('UNAUTHORIZED', 'invalid token');
}
