import type { EgressFetch } from '@flowbox/egress';
import { createPiece, createTrigger, type PollDedupe } from '@flowbox/pieces-framework';
import { DEFAULT_FETCH_LIMITS, type EnginePollJob, type FlowBundle } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { createPollExecutor } from './poll-executor.ts';

/** A poll of a piece whose trigger answers `items`, through the executor as the engine runs it. */
async function pollOf(
  items: unknown[] | (() => never),
  dedupe: PollDedupe = { by: 'id', field: 'id' },
  maxResultBytes = 1_000_000,
) {
  const trigger = createTrigger({
    name: 'rows',
    description: 'rows',
    strategy: 'polling',
    dedupe,
    poll: async (ctx, { state }) => {
      const answer = await ctx.fetch({ url: 'https://rows.example/', method: 'GET' });
      if (typeof items === 'function') return items();
      return { items, state: { seen: answer.body, after: state } };
    },
  });
  const piece = createPiece({ name: 'rows', version: '1.0.0', triggers: [trigger] });
  const bundle: FlowBundle = {
    version: 1,
    flowId: 'f',
    flowVersionId: 'v',
    definition: {
      trigger: { name: 'trigger', piece: 'rows', trigger: 'rows', input: { key: 'sku' } },
      steps: [],
    },
    code: {},
    pieces: [{ name: 'rows', version: '1.0.0' }],
  };
  const egress: EgressFetch = async (request) => ({
    status: 200,
    headers: {},
    body: 'answer',
    url: request.url,
  });
  const executor = createPollExecutor({
    bundles: { load: async () => bundle },
    pieces: { load: async () => piece },
    log: () => {},
    egressFetch: () => egress,
  });
  const job: EnginePollJob = {
    jobId: 'j',
    flowId: 'f',
    flowVersionId: 'v',
    bundlePath: '/cache/bundle.json',
    pieces: [{ name: 'rows', version: '1.0.0', dir: '/cache/rows' }],
    state: 'before',
    maxResultBytes,
    egress: { allowPublic: true, named: [] },
    fetchLimits: DEFAULT_FETCH_LIMITS,
  };
  return executor.poll(job);
}

describe('a poll in the engine', () => {
  it('answers each item with its id key, and the state the trigger gave', async () => {
    expect(await pollOf([{ id: 'a' }, { id: 7 }])).toEqual({
      type: 'ok',
      items: [
        { key: 'a', item: { id: 'a' } },
        { key: '7', item: { id: 7 } },
      ],
      state: { seen: 'answer', after: 'before' },
    });
  });

  it('keys by a field the input names, and by time with the content for timestamps', async () => {
    const byInput = await pollOf([{ sku: 'x-1' }], { by: 'id', field: (input) => String(input.key) });
    expect(byInput.type === 'ok' && byInput.items[0]?.key).toBe('x-1');
    const byTime = await pollOf(
      [
        { at: '2026-11-29T10:00:00Z', n: 1 },
        { at: '2026-11-29T10:00:00Z', n: 2 },
      ],
      { by: 'timestamp', field: 'at' },
    );
    if (byTime.type !== 'ok') throw new Error('the poll failed');
    const [first, second] = byTime.items.map((entry) => entry.key);
    expect(first).toMatch(/^2026-11-29T10:00:00\.000Z#[0-9a-f]{32}$/);
    expect(second).not.toBe(first);
  });

  it('fails the poll, naming the field and the item, when an item has no key; and when the trigger throws', async () => {
    expect(await pollOf([{ id: 'a' }, { name: 'no id' }])).toMatchObject({
      type: 'error',
      error: { code: 'POLL_FAILED', message: expect.stringContaining("item 1 has no 'id'") },
    });
    expect(await pollOf([{ at: 'not a date' }], { by: 'timestamp', field: 'at' })).toMatchObject({
      type: 'error',
      error: { code: 'POLL_FAILED', message: expect.stringContaining("item 0 has no 'at'") },
    });
    expect(await pollOf([{ id: 'a', text: 'x'.repeat(200) }], undefined, 100)).toMatchObject({
      type: 'error',
      error: { code: 'POLL_FAILED', message: expect.stringContaining('over the 100 a poll') },
    });
    const thrown = await pollOf(() => {
      throw new Error('the source is down');
    });
    expect(thrown).toMatchObject({
      type: 'error',
      error: { code: 'POLL_FAILED', message: 'the source is down' },
    });
  });
});
