import { Redis } from 'ioredis';
import { describe, expect, inject, it } from 'vitest';
import { diffRedis, openRedisProbe, parseRedisInfo } from './redis-stats.ts';

const INFO = (info: number, evalsha: number, get: number, commands: number, reads: number) =>
  [
    '# Stats',
    `total_commands_processed:${commands}`,
    `total_reads_processed:${reads}`,
    'total_writes_processed:12',
    '',
    '# Commandstats',
    `cmdstat_info:calls=${info},usec=100,usec_per_call=50.00,rejected_calls=0,failed_calls=0`,
    `cmdstat_evalsha:calls=${evalsha},usec=10,usec_per_call=1.00,rejected_calls=0,failed_calls=0`,
    `cmdstat_get:calls=${get},usec=10,usec_per_call=1.00,rejected_calls=0,failed_calls=0`,
    'cmdstat_client|setname:calls=3,usec=1,usec_per_call=0.33,rejected_calls=0,failed_calls=0',
  ].join('\r\n');

describe('parseRedisInfo', () => {
  it('reads command calls (subcommands included) and the totals', () => {
    const snapshot = parseRedisInfo(INFO(2, 5, 7, 40, 30), 4);
    expect(snapshot).toEqual({
      calls: { info: 2, evalsha: 5, get: 7, 'client|setname': 3 },
      totalCommandsProcessed: 40,
      totalReadsProcessed: 30,
      ownCallsBefore: 4,
    });
  });
});

describe('diffRedis', () => {
  it("subtracts the probe's own INFO calls", () => {
    const before = parseRedisInfo(INFO(2, 5, 7, 40, 30), 2);
    const after = parseRedisInfo(INFO(3, 8, 13, 50, 34), 3);
    expect(diffRedis(before, after)).toEqual({
      commands: 9,
      commandsProcessed: 9,
      roundTrips: 3,
      perCommand: { evalsha: 3, get: 6 },
    });
  });
});

describe('openRedisProbe', () => {
  it("counts exactly the commands another client ran, scripts' inner ones included", async () => {
    const probe = await openRedisProbe(inject('redisUrl'));
    const client = new Redis(inject('redisUrl'), { lazyConnect: true, enableReadyCheck: false });
    await client.connect();
    try {
      const key = `bench-test-${Math.random()}`;
      const before = await probe.snapshot();
      await client.set(key, '1');
      await client.eval("redis.call('incr', KEYS[1]); return redis.call('get', KEYS[1])", 1, key);
      await client.pipeline().get(key).get(key).exec();
      await client.del(key);
      const delta = diffRedis(before, await probe.snapshot());
      // set, eval + incr + get, get, get, del; other test files share this server, so at least.
      expect(delta.perCommand.eval).toBeGreaterThanOrEqual(1);
      expect(delta.commands).toBeGreaterThanOrEqual(7);
      expect(delta.commandsProcessed).toBeGreaterThanOrEqual(7);
      expect(delta.roundTrips).toBeGreaterThanOrEqual(4);
    } finally {
      client.disconnect();
      await probe.close();
    }
  });
});
