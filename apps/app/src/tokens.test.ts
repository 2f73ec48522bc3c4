import { createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { TokenService } from './tokens.ts';

const SECRET = 'a'.repeat(40);

const b64 = (value: unknown) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT signed with `secret` over any header and claims, as an attacker holding it could. */
function handMade(header: unknown, claims: unknown, secret = SECRET): string {
  const input = `${b64(header)}.${b64(claims)}`;
  return `${input}.${createHmac('sha256', secret).update(input).digest('base64url')}`;
}

function refusal(verify: () => unknown): { code: string; message: string } {
  try {
    verify();
  } catch (error) {
    return { code: (error as { code: string }).code, message: (error as Error).message };
  }
  throw new Error('the token was accepted');
}

describe('TokenService', () => {
  const tokens = new TokenService(SECRET);
  const now = () => Math.floor(Date.now() / 1000);

  it('round-trips an engine token scoped to one run', () => {
    const token = tokens.signEngineToken({ runId: 'run-a', syncInstanceId: 'app-1' }, 60);
    expect(tokens.verifyEngineToken(token)).toEqual({ runId: 'run-a', syncInstanceId: 'app-1' });
    const asyncRun = tokens.signEngineToken({ runId: 'run-b', syncInstanceId: null }, 60);
    expect(tokens.verifyEngineToken(asyncRun)).toEqual({ runId: 'run-b', syncInstanceId: null });
  });

  it('refuses a worker token where an engine token is expected, and the reverse', () => {
    const worker = tokens.signWorkerToken('w1', 60);
    const engine = tokens.signEngineToken({ runId: 'run-a', syncInstanceId: null }, 60);
    expect(tokens.verifyWorkerToken(worker)).toEqual({ workerName: 'w1' });
    expect(refusal(() => tokens.verifyEngineToken(worker)).code).toBe('UNAUTHORIZED');
    expect(refusal(() => tokens.verifyWorkerToken(engine)).code).toBe('UNAUTHORIZED');
  });

  it('refuses expired, tampered, foreign and unsigned tokens', () => {
    const expired = tokens.signEngineToken({ runId: 'run-a', syncInstanceId: null }, -10);
    expect(refusal(() => tokens.verifyEngineToken(expired))).toEqual({
      code: 'UNAUTHORIZED',
      message: 'token expired',
    });

    const good = tokens.signEngineToken({ runId: 'run-a', syncInstanceId: null }, 60);
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const forged = b64({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'run-b' });
    expect(refusal(() => tokens.verifyEngineToken(`${header}.${forged}.${signature}`)).code).toBe(
      'UNAUTHORIZED',
    );

    const foreign = new TokenService('b'.repeat(40)).signEngineToken(
      { runId: 'run-a', syncInstanceId: null },
      60,
    );
    expect(refusal(() => tokens.verifyEngineToken(foreign)).code).toBe('UNAUTHORIZED');

    const none = `${b64({ alg: 'none', typ: 'JWT' })}.${payload}.`;
    expect(refusal(() => tokens.verifyEngineToken(none)).code).toBe('UNAUTHORIZED');
    expect(refusal(() => tokens.verifyEngineToken('not-a-jwt')).code).toBe('UNAUTHORIZED');
  });

  it('refuses correctly signed tokens whose header or claims are not flowbox engine claims', () => {
    const claims = {
      iss: 'flowbox',
      aud: 'flowbox-engine',
      sub: 'run-a',
      sid: null,
      iat: now(),
      exp: now() + 60,
    };
    // The reference: this hand-made token is accepted, so each refusal below is about one change.
    expect(tokens.verifyEngineToken(handMade({ alg: 'HS256', typ: 'JWT' }, claims)).runId).toBe('run-a');
    const cases: Array<[string, unknown, unknown]> = [
      ['another algorithm named in the header', { alg: 'HS512', typ: 'JWT' }, claims],
      ['another audience', { alg: 'HS256', typ: 'JWT' }, { ...claims, aud: 'flowbox-worker' }],
      ['another issuer', { alg: 'HS256', typ: 'JWT' }, { ...claims, iss: 'someone' }],
      ['no expiry', { alg: 'HS256', typ: 'JWT' }, { ...claims, exp: undefined }],
      ['issued in the future', { alg: 'HS256', typ: 'JWT' }, { ...claims, iat: now() + 3600 }],
      ['no run claims', { alg: 'HS256', typ: 'JWT' }, { ...claims, sid: undefined }],
      ['a run claim that is not a string', { alg: 'HS256', typ: 'JWT' }, { ...claims, sid: 42 }],
      ['a run claim that is an object', { alg: 'HS256', typ: 'JWT' }, { ...claims, sid: { id: 'app-1' } }],
      ['a subject that is not a string', { alg: 'HS256', typ: 'JWT' }, { ...claims, sub: 7 }],
      ['an iat that is not a number', { alg: 'HS256', typ: 'JWT' }, { ...claims, iat: String(now()) }],
    ];
    for (const [why, header, body] of cases) {
      expect(
        refusal(() => tokens.verifyEngineToken(handMade(header, body))),
        why,
      ).toEqual({
        code: 'UNAUTHORIZED',
        message: 'invalid token',
      });
    }
  });

  it('refuses correctly signed worker tokens whose claims are malformed', () => {
    const claims = { iss: 'flowbox', aud: 'flowbox-worker', sub: 'w1', iat: now(), exp: now() + 60 };
    const header = { alg: 'HS256', typ: 'JWT' };
    expect(tokens.verifyWorkerToken(handMade(header, claims))).toEqual({ workerName: 'w1' });
    for (const body of [
      { ...claims, sub: ['w1'] },
      { ...claims, iat: null },
      { ...claims, iat: now() + 3600 },
    ]) {
      expect(
        refusal(() => tokens.verifyWorkerToken(handMade(header, body))),
        JSON.stringify(body),
      ).toEqual({
        code: 'UNAUTHORIZED',
        message: 'invalid token',
      });
    }
  });
});
