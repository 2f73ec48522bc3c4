import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSTALL_HINTS } from './find-binary.ts';
import { type ManagedProcess, spawnManaged } from './managed-process.ts';
import { type RestartableServer, startRestartable } from './restartable.ts';

export interface RedisServerOptions {
  /** 0 or unset: a free port. */
  port?: number;
  /** Working directory of the server; a temporary one (removed on close) when unset. */
  dataDir?: string;
  /** The redis-server executable; found on PATH when unset. */
  binary?: string;
  readyTimeoutMs?: number;
  /**
   * Keep the data across a `stop()` and `start()` (an append-only file in `dataDir`), as a
   * production Redis would: fault tests restart the server and expect the queue to survive.
   */
  appendOnly?: boolean;
  /** Start it in a process group of its own (see SpawnOptions.ownProcessGroup). */
  ownProcessGroup?: boolean;
}

/** `stop`, `start`, `pause` and `resume` are for fault tests. */
export type RedisServer = RestartableServer;

/**
 * Starts `redis-server` on 127.0.0.1 with `maxmemory-policy noeviction` (BullMQ needs it: an
 * evicted job key is a lost run), and without persistence unless `appendOnly`.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const ownDir = options.dataDir === undefined;
  const dir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'flowbox-redis-')));
  const removeOwnDir = async () => {
    if (ownDir) await rm(dir, { recursive: true, force: true });
  };
  try {
    // A restart keeps the port and the directory (with appendOnly, the data too).
    return await startRestartable({
      binary: 'redis-server',
      installHint: INSTALL_HINTS.redis,
      port: options.port,
      portTaken: /Address already in use/i,
      url: (port) => `redis://127.0.0.1:${port}`,
      launch: (port) =>
        spawnRedis(options.binary ?? 'redis-server', port, dir, {
          appendOnly: options.appendOnly ?? false,
          ownProcessGroup: options.ownProcessGroup ?? false,
        }),
      ready: (child) => child.waitForLine(/Ready to accept connections/, options.readyTimeoutMs ?? 20_000),
      // SIGTERM: Redis writes its append-only file and exits, as on an operator's restart.
      stopSignal: 'SIGTERM',
      graceMs: 10_000,
      afterClose: removeOwnDir,
    });
  } catch (error) {
    await removeOwnDir();
    throw error;
  }
}

export function spawnRedis(
  binary: string,
  port: number,
  dir: string,
  {
    appendOnly,
    ownProcessGroup,
    extraArgs = [],
  }: { appendOnly: boolean; ownProcessGroup: boolean; extraArgs?: string[] },
): ManagedProcess {
  return spawnManaged({
    name: 'redis-server',
    command: binary,
    args: [
      '--bind',
      '127.0.0.1',
      '--port',
      String(port),
      '--dir',
      dir,
      '--save',
      '',
      '--appendonly',
      appendOnly ? 'yes' : 'no',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--loglevel',
      'notice',
      ...extraArgs,
    ],
    cwd: dir,
    parentDeathSignal: 'SIGTERM',
    ownProcessGroup,
  });
}
