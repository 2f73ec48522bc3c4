import { describe, expect, it } from 'vitest';
import { retryRedis } from './redis-retry.ts';

const refused = () =>
  Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:6379'), { code: 'ECONNREFUSED' });

/** An attempt that fails with `errors` in turn, then answers `ok`; counts its calls. */
function failing(...errors: unknown[]) {
  const calls = { count: 0 };
  const attempt = async () => {
    const error = errors[calls.count];
    calls.count += 1;
    if (error !== undefined) throw error;
    return 'ok';
  };
  return { attempt, calls };
}

describe('retryRedis', () => {
  it('tries again while Redis cannot be reached, then answers', async () => {
    const { attempt, calls } = failing(refused(), refused());
    const retried: Error[] = [];
    await expect(
      retryRedis(attempt, { everyMs: 1, forMs: 5_000, onRetry: (e) => retried.push(e) }),
    ).resolves.toBe('ok');
    expect(calls.count).toBe(3);
    expect(retried).toHaveLength(2);
  });

  it('does not retry an error that is not an outage', async () => {
    const { attempt, calls } = failing(new Error('WRONGTYPE'));
    await expect(retryRedis(attempt, { everyMs: 1, forMs: 5_000 })).rejects.toThrow('WRONGTYPE');
    expect(calls.count).toBe(1);
  });

  it('gives the last outage error up once forMs has passed', async () => {
    const attempt = () => Promise.reject(refused());
    await expect(retryRedis(attempt, { everyMs: 1, forMs: 20 })).rejects.toMatchObject({
      code: 'ECONNREFUSED',
    });
  });

  it('lets retryIf decide, TypeErrors included', async () => {
    const { attempt, calls } = failing(new TypeError('x is not a function'), new Error('other'));
    const error = await retryRedis(attempt, { everyMs: 1, retryIf: (e) => e instanceof TypeError }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(Error);
    expect(error).not.toBeInstanceOf(TypeError);
    expect(calls.count).toBe(2);
    const typeError = await retryRedis(() => Promise.reject(new TypeError('t')), {
      everyMs: 1,
      retryIf: () => false,
    }).catch((e: unknown) => e);
    expect(typeError).toBeInstanceOf(TypeError);
  });

  it('stops waiting when its signal aborts', async () => {
    const controller = new AbortController();
    const attempt = () => {
      controller.abort(new Error('closing'));
      return Promise.reject(refused());
    };
    await expect(retryRedis(attempt, { everyMs: 60_000, signal: controller.signal })).rejects.toThrow(
      'closing',
    );
  });
});
