import { execFile } from 'node:child_process';
import { chmod, copyFile, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import {
  findToxiproxy,
  type ProxyLatency,
  startToxiproxy,
  TOXIPROXY_BINARY,
  TOXIPROXY_INSTALL_HINT,
  TOXIPROXY_MODULE,
} from '@flowbox/local-services';
import type { Services } from './services.ts';

/**
 * `--latency s3=20,pg=1,redis=0.5` and `-net` scenarios: every store reached through a TCP
 * proxy (toxiproxy) that delays each direction, so a run pays a real network's round trips.
 * The presigned URLs the app hands out name the proxied S3 endpoint, so the engine's log upload
 * and the worker's downloads cross it too.
 */

/** One-way delay per store, in milliseconds. */
export interface NetworkLatency {
  s3: number;
  pg: number;
  redis: number;
}

/** A deployment's typical distances: S3 in another zone, Postgres and Redis in the same one. */
export const DEFAULT_LATENCY: NetworkLatency = { s3: 20, pg: 1, redis: 0.5 };

const STORES = ['s3', 'pg', 'redis'] as const;
const MAX_ONE_WAY_MS = 1_000;

/** Parses `s3=20,pg=1,redis=0.5`; a store left out keeps the default's delay. */
export function parseLatency(raw: string): NetworkLatency {
  const latency = { ...DEFAULT_LATENCY };
  for (const part of raw.split(',').filter((p) => p.trim() !== '')) {
    const [key, value] = part.split('=').map((s) => s.trim());
    if (!STORES.includes(key as (typeof STORES)[number])) {
      throw new Error(`--latency: unknown store "${key}" (expected ${STORES.join(', ')})`);
    }
    const ms = Number(value);
    if (value === undefined || value === '' || !Number.isFinite(ms) || ms < 0 || ms > MAX_ONE_WAY_MS) {
      throw new Error(`--latency: ${key} must be 0..${MAX_ONE_WAY_MS} ms one way, got "${value}"`);
    }
    latency[key as keyof NetworkLatency] = ms;
  }
  return latency;
}

/**
 * Toxiproxy delays in whole milliseconds per direction: a one-way delay becomes a round trip of
 * `round(2 × ms)`, split between the two directions (0.5 ms one way: 1 ms on the answer).
 */
export function roundTripSplit(oneWayMs: number): ProxyLatency {
  const roundTrip = Math.round(oneWayMs * 2);
  const upstreamMs = Math.floor(roundTrip / 2);
  return { upstreamMs, downstreamMs: roundTrip - upstreamMs };
}

export function describeLatency(latency: NetworkLatency): string {
  const part = (name: string, ms: number) => {
    const split = roundTripSplit(ms);
    return `${name} ${ms} ms one way (round trip ${split.upstreamMs + split.downstreamMs} ms)`;
  };
  return `toxiproxy in front of each store: ${part('S3', latency.s3)}, ${part('Postgres', latency.pg)}, ${part('Redis', latency.redis)}`;
}

/** The proxies, and the stores as a `-net` scenario's stack reaches them. */
export interface Network {
  latency: NetworkLatency;
  pid: number | undefined;
  /** The same stores behind the proxies: URLs and endpoints rewritten, databases too. */
  over(services: Services): Services;
  close(): Promise<void>;
}

export async function startNetwork(
  services: Services,
  latency: NetworkLatency,
  tools: { pathEnv: string | undefined; toolsDir: string },
): Promise<Network> {
  const binary = findToxiproxy(tools) ?? (await buildToxiproxy(tools.toolsDir));
  const proxy = await startToxiproxy({ binary });
  try {
    const redis = new URL(services.redisUrl);
    const s3 = new URL(services.s3.endpoint);
    const pgHost = await postgresHost(services);
    const [redisAt, s3At, pgAt] = await Promise.all([
      proxy.addProxy('redis', redis.host, roundTripSplit(latency.redis)),
      proxy.addProxy('s3', s3.host, roundTripSplit(latency.s3)),
      proxy.addProxy('postgres', pgHost, roundTripSplit(latency.pg)),
    ]);
    const via = (url: string, host: string) => {
      const rewritten = new URL(url);
      rewritten.host = host;
      return rewritten.toString().replace(/\/$/, '');
    };
    return {
      latency,
      pid: proxy.pid,
      over: (base) => ({
        ...base,
        redisUrl: via(base.redisUrl, redisAt),
        s3: { ...base.s3, endpoint: via(base.s3.endpoint, s3At) },
        createDatabase: async (name) => {
          const database = await base.createDatabase(name);
          return { ...database, url: via(database.url, pgAt) };
        },
      }),
      close: () => proxy.close(),
    };
  } catch (error) {
    await proxy.close();
    throw error;
  }
}

/** Where the database server listens (`host:port`), read from a database URL it hands out. */
async function postgresHost(services: Services): Promise<string> {
  if (services.database.kind === 'postgres') return new URL(services.database.adminUrl).host;
  throw new Error('--latency needs PostgreSQL (PGlite has no TCP port to put a proxy in front of)');
}

async function buildToxiproxy(toolsDir: string): Promise<string> {
  const gobin = await mkdtemp(join(tmpdir(), 'toxiproxy-build-'));
  const target = join(toolsDir, 'bin', TOXIPROXY_BINARY);
  console.log(`toxiproxy is missing: building ${TOXIPROXY_MODULE} into ${target}...`);
  try {
    await promisify(execFile)('go', ['install', TOXIPROXY_MODULE], {
      env: { ...process.env, GOBIN: gobin },
      timeout: 600_000,
    });
    await mkdir(join(toolsDir, 'bin'), { recursive: true });
    // Copied, not renamed: the temporary directory may be on another filesystem.
    await copyFile(join(gobin, 'server'), target);
    await chmod(target, 0o755);
    return target;
  } catch (error) {
    throw new Error(`toxiproxy could not be built (${(error as Error).message}). ${TOXIPROXY_INSTALL_HINT}`);
  } finally {
    await rm(gobin, { recursive: true, force: true });
  }
}
