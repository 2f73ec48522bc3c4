import { execFile } from 'node:child_process';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as delay } from 'node:timers/promises';
import { promisify } from 'node:util';
import { INSTALL_HINTS } from './find-binary.ts';
import { freePort } from './free-port.ts';
import { type LocalService, MissingBinaryError } from './local-service.ts';
import { spawnRedis } from './redis-server.ts';
import { type RestartableServer, startRestartable } from './restartable.ts';

const execFileAsync = promisify(execFile);

/** redis-cli comes with redis-server (Debian's redis-tools, a dependency of redis-server). */
async function run(command: 'redis-cli', args: string[]): Promise<{ stdout: string }> {
  try {
    return await execFileAsync(command, args);
  } catch (error) {
    if ((error as { code?: unknown }).code === 'ENOENT')
      throw new MissingBinaryError(command, INSTALL_HINTS.redis);
    throw error;
  }
}

export interface RedisClusterOptions {
  /** Primaries (slots are split evenly between them); 3 unless set. */
  masters?: number;
  /** Replicas of each primary; 1 unless set (a killed primary then has one to promote). */
  replicasPerMaster?: number;
  /**
   * How long a node may be silent before the others count it failed and its replica takes over
   * (`cluster-node-timeout`); short, so a failover test does not wait long.
   */
  nodeTimeoutMs?: number;
  readyTimeoutMs?: number;
}

export interface RedisClusterNode extends RestartableServer {
  /** `host:port` as the cluster names it. */
  readonly address: string;
}

export interface RedisCluster extends LocalService {
  /** `redis+cluster://127.0.0.1:p1,127.0.0.1:p2,...`: every node, as the app's REDIS_URL. */
  url: string;
  nodes: RedisClusterNode[];
  /** The nodes serving slots now (they change with a failover). */
  primaries(): Promise<RedisClusterNode[]>;
  /** Resolves once every running node reports `cluster_state:ok` and agrees on the primaries. */
  waitHealthy(timeoutMs?: number): Promise<void>;
}

/**
 * Starts a real Redis Cluster on 127.0.0.1: `masters × (1 + replicasPerMaster)` redis-server
 * processes with `--cluster-enabled yes`, joined with `redis-cli --cluster create`. Each node has
 * its own data directory (without persistence), client port and cluster-bus port.
 */
export async function startRedisCluster(options: RedisClusterOptions = {}): Promise<RedisCluster> {
  const masters = options.masters ?? 3;
  const replicas = options.replicasPerMaster ?? 1;
  const nodeTimeoutMs = options.nodeTimeoutMs ?? 1_000;
  const root = await mkdtemp(join(tmpdir(), 'flowbox-redis-cluster-'));
  const nodes: RedisClusterNode[] = [];
  const close = async () => {
    await Promise.all(nodes.map((node) => node.close()));
    await rm(root, { recursive: true, force: true });
  };
  try {
    for (let index = 0; index < masters * (1 + replicas); index += 1) {
      const dir = join(root, `node-${index}`);
      await mkdir(dir);
      // The bus port is named, not the default port + 10000, which may be past 65535.
      const busPort = await freePort();
      const server = await startRestartable({
        binary: 'redis-server',
        installHint: INSTALL_HINTS.redis,
        port: 0,
        portTaken: /Address already in use/i,
        url: (port) => `redis://127.0.0.1:${port}`,
        launch: (port) =>
          spawnRedis('redis-server', port, dir, {
            appendOnly: false,
            ownProcessGroup: false,
            extraArgs: [
              '--cluster-enabled',
              'yes',
              '--cluster-config-file',
              join(dir, 'nodes.conf'),
              '--cluster-node-timeout',
              String(nodeTimeoutMs),
              '--cluster-port',
              String(busPort),
              // A replica takes over however long it was cut off from its primary.
              '--cluster-replica-validity-factor',
              '0',
            ],
          }),
        ready: (child) => child.waitForLine(/Ready to accept connections/, options.readyTimeoutMs ?? 20_000),
        stopSignal: 'SIGTERM',
        graceMs: 10_000,
      });
      nodes.push(Object.assign(server, { address: `127.0.0.1:${server.port}` }));
    }
    await run('redis-cli', [
      '--cluster',
      'create',
      ...nodes.map((node) => node.address),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    const cluster: RedisCluster = {
      url: `redis+cluster://${nodes.map((node) => node.address).join(',')}`,
      nodes,
      primaries: async () => {
        const running = nodes.filter((node) => node.running);
        const masterPorts = await primaryPorts(running[0]?.port ?? 0);
        return nodes.filter((node) => masterPorts.has(node.port));
      },
      waitHealthy: (timeoutMs = options.readyTimeoutMs ?? 30_000) =>
        waitHealthy(
          nodes.filter((node) => node.running),
          masters,
          timeoutMs,
        ),
      close,
    };
    await cluster.waitHealthy();
    return cluster;
  } catch (error) {
    await close();
    throw error;
  }
}

async function cli(port: number, ...args: string[]): Promise<string> {
  const { stdout } = await run('redis-cli', ['-h', '127.0.0.1', '-p', String(port), ...args]);
  return stdout;
}

/** Ports of the connected primaries that hold slots, as `port`'s node sees them. */
async function primaryPorts(port: number): Promise<Set<number>> {
  const lines = (await cli(port, 'cluster', 'nodes')).split('\n');
  const ports = new Set<number>();
  for (const line of lines) {
    const [, address = '', flags = '', , , , , link = '', ...slots] = line.split(' ');
    if (!flags.split(',').includes('master') || flags.includes('fail') || link !== 'connected') continue;
    if (slots.length === 0) continue;
    ports.add(Number(address.split('@')[0]?.split(':')[1]));
  }
  return ports;
}

/** Polls the nodes (a cluster says nothing when it converges) until all agree it is whole. */
async function waitHealthy(nodes: RedisClusterNode[], masters: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let last = '';
  for (;;) {
    try {
      const states = await Promise.all(nodes.map((node) => cli(node.port, 'cluster', 'info')));
      const views = await Promise.all(nodes.map((node) => primaryPorts(node.port)));
      const ok = states.every((state) => /cluster_state:ok/.test(state));
      // A killed primary is still listed until the others count it failed: only running ones count.
      const up = new Set(nodes.map((node) => node.port));
      const agreed = views.every(
        (view) =>
          view.size === masters && sameSet(view, views[0] ?? new Set()) && [...view].every((p) => up.has(p)),
      );
      if (ok && agreed) return;
      last = ok ? 'nodes disagree on the primaries' : 'cluster_state is not ok on every node';
    } catch (error) {
      last = String(error);
    }
    if (Date.now() > deadline) throw new Error(`redis cluster not healthy after ${timeoutMs} ms: ${last}`);
    await delay(100);
  }
}

function sameSet(a: Set<number>, b: Set<number>): boolean {
  return a.size === b.size && [...a].every((value) => b.has(value));
}
