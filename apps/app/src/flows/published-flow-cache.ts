import { boundedCache, type CacheUsage, usageOf } from '../cache/bounded-cache.ts';
import type { FlowsRepository, PublishedFlow } from './flows-repository.ts';

export interface PublishedFlowCacheOptions {
  /** Flows remembered at most (unknown ids included). */
  maxEntries: number;
  /** Bytes of lookups remembered at most, each counted as its JSON. */
  maxBytes: number;
  /** How long a lookup is reused: how late another app instance sees a flow's change. */
  ttlMs: number;
  /** The clock the TTL is read on (monotonic milliseconds); tests move it by hand. */
  now?: () => number;
}

/** A lookup's answer; unknown ids are remembered too (lru-cache holds no null). */
interface Found {
  flow: PublishedFlow | null;
}

/**
 * The webhook's flow lookup without a database statement per request: `findPublished` answers
 * from memory for `ttlMs`. Changes made through this repository (publish, enable, disable, a
 * new flow) clear the cache at once; changes made on another app instance show here within
 * `ttlMs`. Unknown flow ids are remembered too, so repeated calls to a missing flow are cheap;
 * the entry and byte bounds keep a scan of ids, or any number of flows, from growing it: the
 * least recently used go first. Concurrent lookups of one id share one statement; a failed
 * lookup is not remembered.
 * A deletion needs no wait: the run's INSERT checks the flow is not deleted (RunsRepository.create),
 * so a webhook on an app whose cache is stale still answers 404 and creates no run.
 */
export function withPublishedFlowCache(
  flows: FlowsRepository,
  options: PublishedFlowCacheOptions,
): FlowsRepository & { cacheUsage(): CacheUsage } {
  const bounds = { maxEntries: options.maxEntries, maxBytes: options.maxBytes };
  const cache = boundedCache<Found>(bounds, {
    ttl: options.ttlMs,
    // With a clock of the caller's, read it at every lookup (lru-cache otherwise reuses a reading for 1 ms).
    ...(options.now === undefined ? {} : { perf: { now: options.now }, ttlResolution: 0 }),
    fetchMethod: async (flowId) => ({ flow: await flows.findPublished(flowId) }),
    // A lookup in flight when a change clears the cache still answers its caller; what it
    // found is not stored (the cache no longer holds its entry).
    ignoreFetchAbort: true,
  });
  const clearing =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await write(...args);
      } finally {
        cache.clear();
      }
    };
  return {
    ...flows,
    async findPublished(flowId) {
      const found = await cache.fetch(flowId);
      return found?.flow ?? null;
    },
    createFlow: clearing(flows.createFlow),
    // Publishes too, when asked (in the transaction that adds the version).
    addVersion: clearing(flows.addVersion),
    publish: clearing(flows.publish),
    update: clearing(flows.update),
    delete: clearing(flows.delete),
    cacheUsage: () => usageOf(cache),
  };
}
