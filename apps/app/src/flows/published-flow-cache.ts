import type { FlowsRepository, PublishedFlow } from './flows-repository.ts';

interface Entry {
  flow: Promise<PublishedFlow | null>;
  expiresAt: number;
}

export interface PublishedFlowCacheOptions {
  /** How long a lookup is reused: how late another app instance sees a flow's change. */
  ttlMs: number;
  /** Flows remembered at most (unknown ids included, so a scan of ids cannot grow it). */
  maxEntries: number;
  now?: () => number;
}

/**
 * The webhook's flow lookup without a database statement per request: `findPublished` answers
 * from memory for `ttlMs`. Changes made through this repository (publish, enable, disable, a
 * new flow) clear the cache at once; changes made on another app instance show here within
 * `ttlMs`. Unknown flow ids are remembered too, so repeated calls to a missing flow are cheap.
 * A deletion needs no wait: the run's INSERT checks the flow is not deleted (RunsRepository.create),
 * so a webhook on an app whose cache is stale still answers 404 and creates no run.
 */
export function withPublishedFlowCache(
  flows: FlowsRepository,
  options: PublishedFlowCacheOptions,
): FlowsRepository {
  const now = options.now ?? Date.now;
  const entries = new Map<string, Entry>();
  const clearing =
    <A extends unknown[], R>(write: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      try {
        return await write(...args);
      } finally {
        entries.clear();
      }
    };
  return {
    ...flows,
    findPublished(flowId) {
      const at = now();
      const cached = entries.get(flowId);
      if (cached !== undefined && cached.expiresAt > at) return cached.flow;
      entries.delete(flowId);
      if (entries.size >= options.maxEntries) {
        const oldest = entries.keys().next();
        if (oldest.done !== true) entries.delete(oldest.value);
      }
      const flow = flows.findPublished(flowId);
      const entry = { flow, expiresAt: at + options.ttlMs };
      entries.set(flowId, entry);
      // A failed lookup is not remembered.
      flow.catch(() => {
        if (entries.get(flowId) === entry) entries.delete(flowId);
      });
      return flow;
    },
    createFlow: clearing(flows.createFlow),
    publish: clearing(flows.publish),
    update: clearing(flows.update),
    delete: clearing(flows.delete),
  };
}
