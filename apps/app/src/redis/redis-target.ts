/**
 * What REDIS_URL names: one Redis (`redis://`, `rediss://`), or a Redis Cluster by its seed
 * nodes (`redis+cluster://[user:password@]host:port,host:port`, `rediss+cluster://` for TLS).
 * Any one reachable seed is enough: the client learns the rest of the cluster from it.
 */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | {
      kind: 'cluster';
      nodes: Array<{ host: string; port: number }>;
      username: string | undefined;
      password: string | undefined;
      tls: boolean;
    };

const CLUSTER_URL = /^(rediss?)\+cluster:\/\/(?:([^@/]*)@)?([^/?#]+)\/?$/;
const SEED = /^(\[[0-9a-fA-F:.]+\]|[A-Za-z0-9_.-]+):(\d{1,5})$/;

/** Null for a malformed cluster URL; a `redis://` URL is passed to the client as it is. */
export function parseRedisTarget(url: string): RedisTarget | null {
  const cluster = CLUSTER_URL.exec(url);
  if (cluster === null) return /^rediss?:\/\//.test(url) ? { kind: 'single', url } : null;
  const [, scheme, auth, seeds = ''] = cluster;
  const nodes: Array<{ host: string; port: number }> = [];
  for (const seed of seeds.split(',')) {
    const match = SEED.exec(seed.trim());
    const port = Number(match?.[2]);
    if (match === null || port < 1 || port > 65_535) return null;
    nodes.push({ host: (match[1] ?? '').replace(/^\[|\]$/g, ''), port });
  }
  const [user = '', ...rest] = (auth ?? '').split(':');
  const password = rest.join(':');
  return {
    kind: 'cluster',
    nodes,
    username: user === '' ? undefined : decodeURIComponent(user),
    password: password === '' ? undefined : decodeURIComponent(password),
    tls: scheme === 'rediss',
  };
}

/** For the env schema: a URL the app can connect to. */
export function isRedisUrl(url: string): boolean {
  return parseRedisTarget(url) !== null;
}
