import { describe, expect, it } from 'vitest';
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
  const flow: PublishedFlow = {
    flowId: 'f',
    flowVersionId: 'f-v1',
    enabled: true,
    runWhenCallerGone: false,
    verify: null,
  };

  it('answers repeated lookups from memory until the TTL passes', async () => {
    let now = 0;
    const { flows, calls } = fakeFlows(new Map([['f', flow]]));
    const cached = withPublishedFlowCache(flows, { ttlMs: 1_000, maxEntries: 10, now: () => now });
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(await cached.findPublished('missing')).toBeNull();
    expect(await cached.findPublished('missing')).toBeNull();
    expect(calls.findPublished).toBe(2);
    now = 1_000;
    expect(await cached.findPublished('f')).toEqual(flow);
    expect(calls.findPublished).toBe(3);
  });

  it('forgets everything when a flow changes through it', async () => {
    const published = new Map([['f', flow]]);
    const { flows, calls } = fakeFlows(published);
    const cached = withPublishedFlowCache(flows, { ttlMs: 60_000, maxEntries: 10 });
    await cached.findPublished('f');
    published.set('f', { ...flow, enabled: false });
    await cached.update('f', { enabled: false });
    expect(await cached.findPublished('f')).toMatchObject({ enabled: false });
    await cached.publish('f-v2', { key: 'k', sha256: 's', sizeBytes: 1, pieces: [] }, []);
    await cached.findPublished('f');
    expect(calls.findPublished).toBe(3);
  });

  it('keeps at most maxEntries ids, dropping the oldest', async () => {
    const { flows, calls } = fakeFlows(new Map());
    const cached = withPublishedFlowCache(flows, { ttlMs: 60_000, maxEntries: 2 });
    for (const id of ['a', 'b', 'c']) await cached.findPublished(id);
    await cached.findPublished('c');
    await cached.findPublished('b');
    expect(calls.findPublished).toBe(3);
    await cached.findPublished('a');
    expect(calls.findPublished).toBe(4);
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
      { ttlMs: 60_000, maxEntries: 10 },
    );
    await expect(cached.findPublished('f')).rejects.toThrow('database down');
    fail = false;
    expect(await cached.findPublished('f')).toEqual(flow);
  });
});
