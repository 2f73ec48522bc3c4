import { createHmac, timingSafeEqual } from 'node:crypto';
import { waitUrlKey } from '../queue/durable-dispatch.ts';

/**
 * The credential of a wait URL (durable.ts `waitStepUrls`). The app gives each run's engine a key
 * of its own, base64url(HMAC-SHA256(WAIT_URL_SECRET, runId)); the engine writes a wait's token as
 * base64url(HMAC-SHA256(key, path)) into its URLs. The app derives both again to check a token,
 * so nothing is stored and a key never opens another run's waits. The key is the one dispatch
 * gives the run (durable-dispatch.ts `waitUrlKey`).
 */

/** The token of the wait at `path` (a run path: `each[2]/approval`) under the run's key. */
export function waitToken(key: string, path: string): string {
  return createHmac('sha256', key).update(path).digest('base64url');
}

/** Whether `token` is the one of `runId`'s wait at `path`; compared in constant time. */
export function isWaitToken(secret: string, runId: string, path: string, token: string): boolean {
  const expected = Buffer.from(waitToken(waitUrlKey(secret, runId), path));
  const given = Buffer.from(token);
  return given.length === expected.length && timingSafeEqual(given, expected);
}
