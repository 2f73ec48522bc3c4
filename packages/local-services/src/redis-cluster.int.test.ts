import { describe, expect, it } from 'vitest';
import { isPortFree } from './free-port.ts';
import { startRedisCluster } from './redis-cluster.ts';
import { isAlive, redisCommand } from './test-helpers.ts';

describe('startRedisCluster', () => {
  it('joins three primaries and three replicas, promotes a replica when a primary is killed, and stops every node', async () => {
    const cluster = await startRedisCluster();
    try {
      expect(cluster.nodes).toHaveLength(6);
      expect(cluster.url).toBe(`redis+cluster://${cluster.nodes.map((n) => n.address).join(',')}`);
      const primaries = await cluster.primaries();
      expect(primaries).toHaveLength(3);
      const [killed] = primaries;
      if (killed === undefined) throw new Error('no primary');
      expect(await redisCommand(killed.port, 'CLUSTER INFO')).toContain('cluster_state:ok');

      await killed.stop('SIGKILL');
      await cluster.waitHealthy();
      const after = await cluster.primaries();
      expect(after).toHaveLength(3);
      expect(after).not.toContain(killed);
    } finally {
      await cluster.close();
    }
    for (const node of cluster.nodes) {
      expect(await isPortFree(node.port)).toBe(true);
      expect(isAlive(node.pid ?? -1)).toBe(false);
    }
  }, 60_000);
});
