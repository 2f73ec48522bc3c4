import { FlowboxError } from '@flowbox/protocol';
import { createSigner, createVerifier, TOKEN_ERROR_CODES, TokenError } from 'fast-jwt';
import { z } from 'zod';

const ISSUER = 'flowbox';
const ENGINE_AUDIENCE = 'flowbox-engine';
const WORKER_AUDIENCE = 'flowbox-worker';
const ALGORITHM = 'HS256';
/** Tolerated clock difference between app instances, in seconds. */
const CLOCK_SKEW_SECONDS = 5;

export interface EngineTokenClaims {
  runId: string;
  /** The app instance holding the sync caller's connection, or null for async runs. */
  syncInstanceId: string | null;
}

/**
 * What fast-jwt leaves to the caller, parsed once the signature, issuer, audience and expiry are
 * checked: a string subject and a numeric `iat`; an engine token also names the app instance
 * holding its sync caller (`sid`, null for an async run).
 */
const ClaimsSchema = z.object({ sub: z.string(), iat: z.number() });
const EngineClaimsSchema = ClaimsSchema.extend({ sid: z.string().nullable() });
type Claims = z.infer<typeof ClaimsSchema>;

type Verify = (token: string) => unknown;

/**
 * HS256 JWTs for the two kinds of caller the app does not trust with credentials: a worker
 * (may poll for jobs) and an engine (may report on exactly one run until shortly after its
 * timeout), signed and verified by fast-jwt, synchronously: an engine token is checked on every
 * callback, and an asynchronous WebCrypto path cost about 2 ms of app CPU per run. Each caller
 * kind has its own verifier, which accepts only HS256 (so `alg: none` and algorithm swaps are
 * refused before any claim is read), flowbox as issuer, that kind's audience, a subject and an
 * expiry.
 */
export class TokenService {
  readonly #sign: (payload: Record<string, unknown>) => string;
  readonly #verifyEngine: Verify;
  readonly #verifyWorker: Verify;

  constructor(secret: string) {
    const key = Buffer.from(secret, 'utf8');
    this.#sign = createSigner({ key, algorithm: ALGORITHM, iss: ISSUER });
    this.#verifyEngine = verifierFor(key, ENGINE_AUDIENCE);
    this.#verifyWorker = verifierFor(key, WORKER_AUDIENCE);
  }

  signEngineToken(claims: EngineTokenClaims, ttlSeconds: number): string {
    return this.#signFor(ENGINE_AUDIENCE, claims.runId, ttlSeconds, { sid: claims.syncInstanceId });
  }

  verifyEngineToken(token: string): EngineTokenClaims {
    const claims = verified(this.#verifyEngine, token, EngineClaimsSchema);
    return { runId: claims.sub, syncInstanceId: claims.sid };
  }

  signWorkerToken(workerName: string, ttlSeconds: number): string {
    return this.#signFor(WORKER_AUDIENCE, workerName, ttlSeconds, {});
  }

  verifyWorkerToken(token: string): { workerName: string } {
    return { workerName: verified(this.#verifyWorker, token, ClaimsSchema).sub };
  }

  #signFor(audience: string, subject: string, ttlSeconds: number, extra: { sid?: string | null }): string {
    // `exp` in the payload rather than the signer's `expiresIn`: the TTL differs per token.
    const iat = Math.floor(Date.now() / 1000);
    return this.#sign({ aud: audience, sub: subject, iat, exp: iat + ttlSeconds, ...extra });
  }
}

function verifierFor(key: Buffer, audience: string): Verify {
  return createVerifier({
    key,
    algorithms: [ALGORITHM],
    checkTyp: 'JWT',
    allowedIss: ISSUER,
    allowedAud: audience,
    requiredClaims: ['iss', 'aud', 'sub', 'iat', 'exp'],
    clockTolerance: CLOCK_SKEW_SECONDS * 1000,
  });
}

/** Verifies, parses the claims with `schema`, then refuses a token issued in the future. */
function verified<S extends z.ZodType<Claims>>(verify: Verify, token: string, schema: S): z.infer<S> {
  let payload: unknown;
  try {
    payload = verify(token);
  } catch (error) {
    if (error instanceof TokenError && error.code === TOKEN_ERROR_CODES.expired) {
      throw new FlowboxError('UNAUTHORIZED', 'token expired');
    }
    throw invalid();
  }
  const parsed = schema.safeParse(payload);
  if (!parsed.success) throw invalid();
  if (parsed.data.iat > Date.now() / 1000 + CLOCK_SKEW_SECONDS) throw invalid();
  return parsed.data;
}

function invalid(): FlowboxError {
  return new FlowboxError('UNAUTHORIZED', 'invalid token');
}
