/**
 * The files `flowbox piece init --trigger polling` adds: a polling trigger, `new_entries`, that
 * GETs a JSON URL and starts one run per entry it has not seen (by `id`), and its test.
 */
export const POLLING_TRIGGER_FILES: Record<string, string> = {
  'src/new-entries.ts': `import { createTrigger, type PollContext } from '@flowbox/pieces-framework';

/**
 * A polling trigger: the app polls it every \`intervalSeconds\` of the flow's trigger input (on a
 * worker, like a run), and each entry whose \`id\` it has not seen starts one run, the entry being
 * the trigger's output. \`poll\` answers what the source holds now: old entries are fine, the app
 * keeps the keys it has seen. \`state\` is kept for the next poll (null on the first): return
 * one when the source can answer "what is new since" (a cursor, a time), so a poll reads less.
 * A poll that throws is retried on the next interval and changes nothing.
 */
export const newEntries = createTrigger({
  name: 'new_entries',
  description: 'Starts one run per new entry of the JSON array at \`url\` (its field \`entries\`).',
  strategy: 'polling',
  dedupe: { by: 'id', field: 'id' },
  async poll(ctx: PollContext, { state }) {
    const url = ctx.input.url;
    if (typeof url !== 'string') throw new Error('url: the trigger input needs the URL to poll');
    const response = await ctx.fetch({ url, method: 'GET', headers: { accept: 'application/json' } });
    if (response.status !== 200) throw new Error(\`GET \${url} answered \${response.status}\`);
    const body = JSON.parse(response.body) as { entries?: unknown };
    if (!Array.isArray(body.entries)) throw new Error('the answer has no array \\'entries\\'');
    ctx.log('debug', 'polled', { entries: body.entries.length, after: state });
    return { items: body.entries, state: { polledAt: new Date().toISOString() } };
  },
});
`,
  'src/new-entries.test.ts': `import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { PieceHttpRequest, PollContext } from '@flowbox/pieces-framework';
import piece from './index.ts';

/** A poll as the engine runs it, with \`ctx.fetch\` answering \`body\`. */
async function poll(body: unknown, state: unknown = null) {
  const trigger = piece.triggers.get('new_entries');
  if (trigger?.polling === undefined) throw new Error('no polling trigger new_entries');
  const requests: PieceHttpRequest[] = [];
  const ctx: PollContext = {
    flowId: 'test-flow',
    input: { url: 'https://feed.example/entries' },
    fetch: async (request) => {
      requests.push(request);
      return { status: 200, headers: {}, body: JSON.stringify(body), url: request.url };
    },
    log: () => {},
  };
  return { result: await trigger.polling.poll(ctx, { state }), requests };
}

test('new_entries answers the entries the source holds', async () => {
  const { result, requests } = await poll({ entries: [{ id: 'a' }, { id: 'b' }] });
  assert.deepEqual(result.items, [{ id: 'a' }, { id: 'b' }]);
  assert.equal(requests[0]?.url, 'https://feed.example/entries');
});

test('new_entries fails a poll whose answer has no entries', async () => {
  await assert.rejects(poll({ nothing: true }), /entries/);
});
`,
};
