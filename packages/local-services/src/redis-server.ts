import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { INSTALL_HINTS } from './find-binary.ts';
import { freePort } from './free-port.ts';
import { type LocalService, MissingBinaryError } from './local-service.ts';
import { type ManagedProcess, spawnManaged } from './managed-process.ts';
import { once } from './once.ts';
import { type Restartable, restartable } from './restartable.ts';

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
}

/** `pid` and `running` follow restarts; `stop`, `start`, `pause` and `resume` are for fault tests. */
export interface RedisServer extends LocalService, Restartable {
  port: number;
}

const PORT_ATTEMPTS = 3;

/**
 * Starts `redis-server` on 127.0.0.1 with `maxmemory-policy noeviction` (BullMQ needs it: an
 * evicted job key is a lost run), and without persistence unless `appendOnly`.
 */
export async function startRedisServer(options: RedisServerOptions = {}): Promise<RedisServer> {
  const ownDir = options.dataDir === undefined;
  const dir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'flowbox-redis-')));
  const pickPort = options.port === undefined || options.port === 0;
  try {
    for (let attempt = 1; ; attempt++) {
      const port = pickPort ? await freePort() : (options.port ?? 0);
      const launch = () =>
        spawnRedis(options.binary ?? 'redis-server', port, dir, options.appendOnly ?? false);
      const ready = (child: ManagedProcess) =>
        child.waitForLine(/Ready to accept connections/, options.readyTimeoutMs ?? 20_000);
      const child = launch();
      try {
        await ready(child);
      } catch (error) {
        await child.stop('SIGKILL', 1_000);
        const exit = await child.exited;
        if (exit.missingBinary) throw new MissingBinaryError('redis-server', INSTALL_HINTS.redis);
        const portTaken = /Address already in use/i.test(child.recentOutput());
        if (pickPort && portTaken && attempt < PORT_ATTEMPTS) continue;
        throw error;
      }
      // A restart keeps the port and the directory (with appendOnly, the data too).
      const spawn = async (): Promise<ManagedProcess> => {
        const next = launch();
        try {
          await ready(next);
          return next;
        } catch (error) {
          await next.stop('SIGKILL', 1_000);
          throw error;
        }
      };
      // SIGTERM: Redis writes its append-only file and exits, as on an operator's restart.
      const server = restartable({ first: child, port, stopSignal: 'SIGTERM', graceMs: 10_000, spawn });
      return {
        port,
        url: `redis://127.0.0.1:${port}`,
        get pid() {
          return server.pid;
        },
        get running() {
          return server.running;
        },
        stop: server.stop,
        start: server.start,
        pause: server.pause,
        resume: server.resume,
        close: once(async () => {
          await server.close();
          if (ownDir) await rm(dir, { recursive: true, force: true });
        }),
      };
    }
  } catch (error) {
    if (ownDir) await rm(dir, { recursive: true, force: true });
    throw error;
  }
}

function spawnRedis(binary: string, port: number, dir: string, appendOnly: boolean): ManagedProcess {
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
    ],
    cwd: dir,
    parentDeathSignal: 'SIGTERM',
  });
}
