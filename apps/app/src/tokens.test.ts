import { describe, expect, it } from 'vitest';
import { TokenService } from './tokens.ts';

const SECRET = 'a'.repeat(40);

describe('TokenService', () => {
  const tokens = new TokenService(SECRET);

  it('round-trips an engine token scoped to one run', async () => {
    const token = await tokens.signEngineToken({ runId: 'run-a', syncInstanceId: 'app-1' }, 60);
    await expect(tokens.verifyEngineToken(token)).resolves.toEqual({
      runId: 'run-a',
      syncInstanceId: 'app-1',
    });
  });

  it('refuses a worker token where an engine token is expected, and the reverse', async () => {
    const worker = await tokens.signWorkerToken('w1', 60);
    const engine = await tokens.signEngineToken({ runId: 'run-a', syncInstanceId: null }, 60);
    await expect(tokens.verifyEngineToken(worker)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
    await expect(tokens.verifyWorkerToken(engine)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });

  it('refuses expired, tampered, foreign and unsigned tokens', async () => {
    const expired = await tokens.signEngineToken({ runId: 'run-a', syncInstanceId: null }, -10);
    await expect(tokens.verifyEngineToken(expired)).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
      message: 'token expired',
    });

    const good = await tokens.signEngineToken({ runId: 'run-a', syncInstanceId: null }, 60);
    const [header, payload, signature] = good.split('.') as [string, string, string];
    const forged = Buffer.from(
      JSON.stringify({ ...JSON.parse(Buffer.from(payload, 'base64url').toString()), sub: 'run-b' }),
    );
    await expect(
      tokens.verifyEngineToken(`${header}.${forged.toString('base64url')}.${signature}`),
    ).rejects.toMatchObject({
      code: 'UNAUTHORIZED',
    });

    const foreign = await new TokenService('b'.repeat(40)).signEngineToken(
      { runId: 'run-a', syncInstanceId: null },
      60,
    );
    await expect(tokens.verifyEngineToken(foreign)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });

    const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.`;
    await expect(tokens.verifyEngineToken(none)).rejects.toMatchObject({ code: 'UNAUTHORIZED' });
  });
});
