/** The run queue's name with one shard on a single Redis: its keys are as they always were. */
export const RUN_QUEUE_NAME = 'runs';

/**
 * The names of the run queue's shards (QUEUE_SHARDS). With one shard on a single Redis, `runs`,
 * so an unsharded deployment's queued jobs keep their keys. Otherwise `{runs-<n>}`: the braces make `runs-<n>` the hash tag of
 * every key BullMQ writes for the shard (`<prefix>:{runs-0}:wait`, `<prefix>:{runs-0}:<job id>`),
 * so on a Redis Cluster each shard's keys share one slot, as BullMQ's scripts need, and
 * different shards fall in different slots.
 */
export function runQueueNames(shards: number, cluster: boolean): string[] {
  if (shards === 1 && !cluster) return [RUN_QUEUE_NAME];
  return Array.from({ length: shards }, (_, index) => `{${RUN_QUEUE_NAME}-${index}}`);
}

/**
 * The shard of a flow's runs: FNV-1a (32 bit) of the flow id, modulo the shard count. Stable
 * across processes and releases, so every app puts a flow's runs in the same queue, and the rank
 * fairness between a flow's runs (RunQueue) holds within it.
 */
export function shardOf(flowId: string, shards: number): number {
  if (shards <= 1) return 0;
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(flowId)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}
