import { FlowboxError } from '@flowbox/protocol';
import { errors as joseErrors, jwtVerify, SignJWT } from 'jose';

const ISSUER = 'flowbox';
const ENGINE_AUDIENCE = 'flowbox-engine';
const WORKER_AUDIENCE = 'flowbox-worker';

export interface EngineTokenClaims {
  runId: string;
  /** The app instance holding the sync caller's connection, or null for async runs. */
  syncInstanceId: string | null;
}

/**
 * HS256 tokens for the two kinds of caller the app does not trust with credentials: a worker
 * (may poll for jobs) and an engine (may report on exactly one run until shortly after its
 * timeout). `jwtVerify` is pinned to HS256, so `alg: none` and algorithm swaps are refused.
 */
export class TokenService {
  readonly #key: Uint8Array;

  constructor(secret: string) {
    this.#key = new TextEncoder().encode(secret);
  }

  async signEngineToken(claims: EngineTokenClaims, ttlSeconds: number): Promise<string> {
    return new SignJWT({ sid: claims.syncInstanceId })
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(ENGINE_AUDIENCE)
      .setSubject(claims.runId)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(this.#key);
  }

  async verifyEngineToken(token: string): Promise<EngineTokenClaims> {
    const payload = await this.#verify(token, ENGINE_AUDIENCE);
    const sid = payload.sid;
    if (typeof payload.sub !== 'string' || (sid !== null && typeof sid !== 'string')) {
      throw new FlowboxError('UNAUTHORIZED', 'engine token is missing its run claims');
    }
    return { runId: payload.sub, syncInstanceId: sid };
  }

  async signWorkerToken(workerName: string, ttlSeconds: number): Promise<string> {
    return new SignJWT({})
      .setProtectedHeader({ alg: 'HS256' })
      .setIssuer(ISSUER)
      .setAudience(WORKER_AUDIENCE)
      .setSubject(workerName)
      .setIssuedAt()
      .setExpirationTime(`${ttlSeconds}s`)
      .sign(this.#key);
  }

  async verifyWorkerToken(token: string): Promise<{ workerName: string }> {
    const payload = await this.#verify(token, WORKER_AUDIENCE);
    if (typeof payload.sub !== 'string')
      throw new FlowboxError('UNAUTHORIZED', 'worker token has no subject');
    return { workerName: payload.sub };
  }

  async #verify(token: string, audience: string) {
    try {
      const { payload } = await jwtVerify(token, this.#key, {
        algorithms: ['HS256'],
        issuer: ISSUER,
        audience,
      });
      return payload;
    } catch (error) {
      const reason = error instanceof joseErrors.JWTExpired ? 'token expired' : 'invalid token';
      throw new FlowboxError('UNAUTHORIZED', reason, { cause: error });
    }
  }
}
