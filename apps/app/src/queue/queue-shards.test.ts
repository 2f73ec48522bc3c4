import { describe, expect, it } from 'vitest';
import { RUN_QUEUE_NAME, runQueueNames, shardOf } from './queue-shards.ts';

describe('queue shards', () => {
  it('keeps the one queue named `runs` on a single Redis, and gives every shard a hash tag otherwise', () => {
    expect(runQueueNames(1, false)).toEqual([RUN_QUEUE_NAME]);
    expect(runQueueNames(1, true)).toEqual(['{runs-0}']);
    expect(runQueueNames(3, false)).toEqual(['{runs-0}', '{runs-1}', '{runs-2}']);
  });

  it('puts a flow in the same shard every time, and spreads many flows over every shard', () => {
    expect(shardOf('benchmark', 1)).toBe(0);
    // FNV-1a's published value for "a": a change here would move flows between shards across a
    // rolling upgrade, and apps of two versions would disagree.
    expect(shardOf('a', 1_000_000)).toBe(0xe40c292c % 1_000_000);
    const counts = [0, 0, 0, 0];
    for (let i = 0; i < 4_000; i += 1) {
      const shard = shardOf(`flow-${i}`, 4);
      counts[shard] = (counts[shard] ?? 0) + 1;
    }
    for (const count of counts) expect(count).toBeGreaterThan(800);
  });
});
