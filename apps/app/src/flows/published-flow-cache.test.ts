import { describe, expect, it } from 'vitest';
import { approximateBytes } from '../cache/bounded-cache.ts';
import type { FlowsRepository, PublishedFlow } from './flows-repository.ts';
import { withPublishedFlowCache } from './published-flow-cache.ts';

/** A repository whose published flows live in a map, counting the lookups that reach it. */
function fakeFlows(published: Map<string, PublishedFlow>) {
  const calls = { findPublished: 0 };
  const unused = () => Promise.reject(new Error('not used here'));
  const flows: FlowsRepository = {
    findPublished: async (flowId) => {
      calls.findPublished += 1;
      return published.get(flowId) ?? null;
    },
    getFlow: unused,
    listFlows: unused,
    createFlow: unused,
    addVersion: unused,
    getVersion: unused,
    listVersions: unused,
    publish: async () => {},
    update: async () => null,
    delete: async () => true,
  };
  return { flows, calls };
}

describe('withPublishedFlowCache', () => {
  const bounds = { maxEntries: 10, maxBytes: 1 << 20 };
  const flow: PublishedFlow = {
    flowId: 'f',
    flowVersionId: 'f-v1',
    enabled: true,
    runWhenCallerGone: false,
    verify: null,
    triggerPiece: 'webhook',
    triggerPolls: false,
    errorResponse: null,
  };

  it('answers repeated lookups from memory until the TTL passes', async () => {
    // lru-cache reads a start time of 0 as none: the clock starts at 1.
    let now = 1;
    const { flows, calls } = fakeFlows(new Map([['f', flow]]));
    const cached = withPublishedFlowCache(flows, { ...bounds, ttlMs: 1_000, now: () => now });
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(await cached.findPublished('missing')).toBeNull();
    expect(await cached.findPublished('missing')).toBeNull();
    expect(calls.findPublished).toBe(2);
    now = 1_002;
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(calls.findPublished).toBe(3);
  });

  it('forgets everything when a flow changes through it', async () => {
    const published = new Map([['f', flow]]);
    const { flows, calls } = fakeFlows(published);
    const cached = withPublishedFlowCache(flows, { ...bounds, ttlMs: 60_000 });
    await cached.findPublished('f');
    published.set('f', { ...flow, enabled: false });
    await cached.update('f', { enabled: false });
    expect(await cached.findPublished('f')).toMatchObject({ enabled: false });
    await cached.publish('f-v2', { key: 'k', sha256: 's', sizeBytes: 1, pieces: [] }, []);
    await cached.findPublished('f');
    expect(calls.findPublished).toBe(3);
  });

  it('keeps at most maxEntries ids, dropping the least recently used', async () => {
    const { flows, calls } = fakeFlows(new Map());
    const cache = withPublishedFlowCache(flows, { maxEntries: 2, maxBytes: 1 << 20, ttlMs: 60_000 });
    for (const id of ['a', 'b', 'c']) await cache.findPublished(id);
    await cache.findPublished('c');
    await cache.findPublished('b');
    expect(calls.findPublished).toBe(3);
    expect(cache.cacheUsage().entries).toBe(2);
    await cache.findPublished('a');
    expect(calls.findPublished).toBe(4);
  });

  it('keeps at most maxBytes of flows, counted as their JSON', async () => {
    const published = new Map(['a', 'b', 'c'].map((id) => [id, { ...flow, flowId: id }]));
    const { flows, calls } = fakeFlows(published);
    // Room for two flows of this size, not three.
    const entryBytes = approximateBytes({ flow: { ...flow, flowId: 'a' } }, 'a');
    const cache = withPublishedFlowCache(flows, { maxEntries: 100, maxBytes: entryBytes * 2, ttlMs: 60_000 });
    for (const id of ['a', 'b', 'c']) await cache.findPublished(id);
    expect(cache.cacheUsage()).toEqual({ entries: 2, bytes: entryBytes * 2 });
    await cache.findPublished('a');
    expect(calls.findPublished).toBe(4);
  });

  it('looks an id up once for lookups that overlap', async () => {
    const { flows, calls } = fakeFlows(new Map([['f', flow]]));
    const cached = withPublishedFlowCache(flows, { ...bounds, ttlMs: 60_000 });
    const answers = await Promise.all([cached.findPublished('f'), cached.findPublished('f')]);
    expect(answers).toEqual([flow, flow]);
    expect(calls.findPublished).toBe(1);
  });

  it('answers a lookup a change overtook, and remembers nothing of it', async () => {
    const { flows, calls } = fakeFlows(new Map([['f', flow]]));
    let answer = (_found: PublishedFlow) => {};
    const cached = withPublishedFlowCache(
      {
        ...flows,
        findPublished: (id) => {
          calls.findPublished += 1;
          // The first lookup answers only when the test says so; later ones at once.
          if (calls.findPublished > 1) return Promise.resolve(id === 'f' ? flow : null);
          return new Promise<PublishedFlow>((resolve) => {
            answer = resolve;
          });
        },
      },
      { ...bounds, ttlMs: 60_000 },
    );
    const inFlight = cached.findPublished('f');
    await cached.update('f', { enabled: false });
    answer(flow);
    expect(await inFlight).toEqual(flow);
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(calls.findPublished).toBe(2);
  });

  it('does not remember a failed lookup', async () => {
    let fail = true;
    const { flows } = fakeFlows(new Map([['f', flow]]));
    const cached = withPublishedFlowCache(
      {
        ...flows,
        findPublished: async (id) => {
          if (fail) throw new Error('database down');
          return flows.findPublished(id);
        },
      },
      { ...bounds, ttlMs: 60_000 },
    );
    await expect(cached.findPublished('f')).rejects.toThrow('database down');
    fail = false;
    expect(await cached.findPublished('f')).toEqual(flow);
  });
});
