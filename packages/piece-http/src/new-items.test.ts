import type { PieceHttpRequest, PollContext } from '@flowbox/pieces-framework';
import { describe, expect, it } from 'vitest';
import { httpPiece } from './index.ts';

const trigger = httpPiece.triggers.get('new_items');

/** A poll as the engine runs one, `ctx.fetch` answering `status` and `body`. */
async function poll(input: Record<string, unknown>, status: number, body: string) {
  if (trigger?.polling === undefined) throw new Error('new_items does not poll');
  const requests: PieceHttpRequest[] = [];
  const ctx: PollContext = {
    flowId: 'f',
    input,
    fetch: async (request) => {
      requests.push(request);
      return { status, headers: {}, body, url: request.url };
    },
    log: () => {},
  };
  return { result: await trigger.polling.poll(ctx, { state: null }), requests };
}

describe('new_items', () => {
  it('is a polling trigger keyed by the input’s keyField (default id)', () => {
    expect(trigger?.strategy).toBe('polling');
    const field = trigger?.polling?.dedupe.field;
    expect(typeof field === 'function' ? field({ url: 'https://a.example', keyField: 'sku' }) : field).toBe(
      'sku',
    );
    expect(typeof field === 'function' ? field({ url: 'https://a.example' }) : field).toBe('id');
  });

  it('GETs the URL with the headers and answers the array at the path', async () => {
    const { result, requests } = await poll(
      { url: 'https://a.example/feed', path: 'data.items', headers: { authorization: 'Bearer t' } },
      200,
      '{"data":{"items":[{"id":1},{"id":2}]}}',
    );
    expect(result.items).toEqual([{ id: 1 }, { id: 2 }]);
    expect(requests[0]).toMatchObject({
      url: 'https://a.example/feed',
      method: 'GET',
      headers: { accept: 'application/json', authorization: 'Bearer t' },
    });
  });

  it('fails the poll on a status that is not 2xx, an answer that is not JSON, or no array at the path', async () => {
    await expect(poll({ url: 'https://a.example/feed' }, 503, '{}')).rejects.toThrow('answered 503');
    await expect(poll({ url: 'https://a.example/feed' }, 200, '<html>')).rejects.toThrow(
      'did not answer JSON',
    );
    await expect(poll({ url: 'https://a.example/feed', path: 'items' }, 200, '{"items":{}}')).rejects.toThrow(
      "path: the answer has no array at 'items'",
    );
    await expect(poll({ url: 'ftp://a.example' }, 200, '[]')).rejects.toThrow(
      'url: must be an http or https URL',
    );
  });
});
