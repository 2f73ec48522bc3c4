import { describe, expect, it } from 'vitest';
import { parseRedisTarget } from './redis-target.ts';

describe('parseRedisTarget', () => {
  it('passes a single Redis URL through as it is', () => {
    expect(parseRedisTarget('redis://:pw@cache:6379/2')).toEqual({
      kind: 'single',
      url: 'redis://:pw@cache:6379/2',
    });
    expect(parseRedisTarget('rediss://cache:6380')).toEqual({ kind: 'single', url: 'rediss://cache:6380' });
  });

  it('reads the seed nodes, credentials and TLS of a cluster URL', () => {
    expect(parseRedisTarget('redis+cluster://127.0.0.1:7000,127.0.0.1:7001')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: '127.0.0.1', port: 7000 },
        { host: '127.0.0.1', port: 7001 },
      ],
      username: undefined,
      password: undefined,
      tls: false,
    });
    expect(parseRedisTarget('rediss+cluster://app:p%40ss:w@redis-0.redis:6379,[::1]:6380/')).toEqual({
      kind: 'cluster',
      nodes: [
        { host: 'redis-0.redis', port: 6379 },
        { host: '::1', port: 6380 },
      ],
      username: 'app',
      password: 'p@ss:w',
      tls: true,
    });
  });

  it('refuses a cluster URL without a port, with a path, or with an empty seed', () => {
    for (const url of [
      'redis+cluster://host',
      'redis+cluster://host:6379/0',
      'redis+cluster://host:6379,,other:6379',
      'redis+cluster://host:99999',
      'http://host:6379',
    ]) {
      expect(parseRedisTarget(url), url).toBeNull();
    }
  });
});
