import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSTALL_HINTS } from './find-binary.ts';
import { freePort } from './free-port.ts';
import { type LocalService, MissingBinaryError } from './local-service.ts';
import { type ManagedProcess, spawnManaged } from './managed-process.ts';
import { once } from './once.ts';

export interface RedisServerOptions {
  /** 0 or unset: a free port. */
  port?: number;
  /** Working directory of the server; a temporary one (removed on close) when unset. */
  dataDir?: string;
  /** The redis-server executable; found on PATH when unset. */
  binary?: string;
  readyTimeoutMs?: number;
}

export interface RedisServer extends LocalService {
  port: number;
  /** The server process, for leak checks. */
  pid: number | undefined;
}

const PORT_ATTEMPTS = 3;

/** Starts `redis-server` on 127.0.0.1 without persistence or eviction (BullMQ needs noeviction). */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const ownDir = options.dataDir === undefined;
  const dir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'flowbox-redis-')));
  const pickPort = options.port === undefined || options.port === 0;
  try {
    for (let attempt = 1; ; attempt++) {
      const port = pickPort ? await freePort() : (options.port ?? 0);
      const child = spawnRedis(options.binary ?? 'redis-server', port, dir);
      try {
        await child.waitForLine(/Ready to accept connections/, options.readyTimeoutMs ?? 20_000);
      } catch (error) {
        await child.stop('SIGKILL', 1_000);
        const exit = await child.exited;
        if (exit.missingBinary) throw new MissingBinaryError('redis-server', INSTALL_HINTS.redis);
        const portTaken = /Address already in use/i.test(child.recentOutput());
        if (pickPort && portTaken && attempt < PORT_ATTEMPTS) continue;
        throw error;
      }
      return {
        port,
        pid: child.pid,
        url: `redis://127.0.0.1:${port}`,
        close: once(async () => {
          await child.stop('SIGTERM', 10_000);
          if (ownDir) await rm(dir, { recursive: true, force: true });
        }),
      };
    }
  } catch (error) {
    if (ownDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function spawnRedis(binary: string, port: number, dir: string): ManagedProcess {
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
      'no',
      '--maxmemory-policy',
      'noeviction',
      '--daemonize',
      'no',
      '--loglevel',
      'notice',
    ],
    cwd: dir,
    parentDeathSignal: 'SIGTERM',
  });
}
