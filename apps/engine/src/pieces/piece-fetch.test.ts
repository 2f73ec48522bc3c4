import type { EgressFetch, EgressRequest } from '@flowbox/egress';
import type { PieceHttpRequest } from '@flowbox/pieces-framework';
import { describe, expect, it } from 'vitest';
import { openPieceFetch } from './piece-fetch.ts';

/** An egress fetch that records what it is asked and never answers until its signal aborts. */
function hanging() {
  const seen: Array<{ request: EgressRequest; signal: AbortSignal }> = [];
  const fetcher: EgressFetch = (request, signal) => {
    seen.push({ request, signal });
    return new Promise((_resolve, reject) => {
      signal.addEventListener('abort', () => reject(signal.reason), { once: true });
    });
  };
  return { fetcher, seen };
}

const get = (extra: Partial<PieceHttpRequest> = {}): PieceHttpRequest => ({
  url: 'http://127.0.0.1:9/x',
  method: 'GET',
  ...extra,
});

describe("a piece's ctx.fetch", () => {
  it('hands the egress fetch the request as it is, with the response encoding asked for', async () => {
    const seen: EgressRequest[] = [];
    const session = openPieceFetch(async (request) => {
      seen.push(request);
      return { status: 204, headers: {}, body: '', url: request.url };
    });
    await expect(
      session.fetch(get({ method: 'POST', headers: { a: 'b' }, body: 'x', responseEncoding: 'base64' })),
    ).resolves.toMatchObject({ status: 204 });
    expect(seen).toEqual([
      {
        url: 'http://127.0.0.1:9/x',
        method: 'POST',
        headers: { a: 'b' },
        body: 'x',
        responseEncoding: 'base64',
      },
    ]);
  });

  it('ends a request at its own timeout with HTTP_REQUEST_TIMEOUT', async () => {
    const { fetcher, seen } = hanging();
    const session = openPieceFetch(fetcher);
    await expect(session.fetch(get({ timeoutMs: 20 }))).rejects.toMatchObject({
      code: 'HTTP_REQUEST_TIMEOUT',
      message: expect.stringMatching(/GET http:\/\/127\.0\.0\.1:9 .*20 ms/),
    });
    expect(seen[0]?.signal.aborted).toBe(true);
  });

  it('aborts what the step left in flight when the step ends', async () => {
    const { fetcher, seen } = hanging();
    const session = openPieceFetch(fetcher);
    const pending = session.fetch(get());
    await expect.poll(() => seen.length).toBe(1);
    session.close();
    await expect(pending).rejects.toMatchObject({
      code: 'CODE_STEP_FETCH_FAILED',
      message: 'the step ended',
    });
  });

  it('refuses a malformed request before the egress fetch sees it', async () => {
    const { fetcher, seen } = hanging();
    const session = openPieceFetch(fetcher);
    for (const bad of [
      get({ method: 'get' }),
      get({ timeoutMs: 0 }),
      get({ timeoutMs: 1.5 }),
      { ...get(), body: 1 as unknown as string },
      { ...get(), responseEncoding: 'hex' as 'text' },
    ]) {
      await expect(session.fetch(bad), JSON.stringify(bad)).rejects.toMatchObject({
        code: 'CODE_STEP_FETCH_FAILED',
      });
    }
    expect(seen).toEqual([]);
  });
});
