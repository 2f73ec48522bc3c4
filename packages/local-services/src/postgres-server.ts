import { existsSync } from 'node:fs';
import { chown, mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findPostgresBinDir, INSTALL_HINTS } from './find-binary.ts';
import { freePort } from './free-port.ts';
import { type LocalService, MissingBinaryError, ServiceStartError } from './local-service.ts';
import { describeExit, spawnManaged } from './managed-process.ts';
import { once } from './once.ts';
import { createDatabase } from './postgres-admin.ts';
import { isRoot, lookupSystemUser, type SystemUser } from './system-user.ts';

export interface PostgresServerOptions {
  /** Cluster directory; reused when it already holds a cluster. Temporary (removed on close) when unset. */
  dataDir?: string;
  /** Directory with initdb and postgres; PATH, then /usr/lib/postgresql/<newest>/bin when unset. */
  binDir?: string;
  /** 0 or unset: a free port. */
  port?: number;
  /** Tests run many pools side by side; PostgreSQL's default of 100 is tight. */
  maxConnections?: number;
  readyTimeoutMs?: number;
}

export interface PostgresServer extends LocalService {
  port: number;
  /** The server process, for leak checks. */
  pid: number | undefined;
  dataDir: string;
  /** Creates a database (optionally cloned from `template`) and returns its URL. */
  createDatabase(name: string, template?: string): Promise<string>;
}

const PORT_ATTEMPTS = 3;
/** sun_path holds 108 bytes; the socket file name adds `/.s.PGSQL.NNNNN` to the directory. */
const MAX_SOCKET_DIR_LENGTH = 90;

/**
 * Starts a PostgreSQL cluster (a temporary one unless `dataDir` is given) on 127.0.0.1: trust auth for user `postgres`, no fsync,
 * the unix socket inside the data directory. As root it runs as the `postgres` system user,
 * because initdb and postgres refuse to run as root.
 */
export async function startPostgresServer(options: PostgresServerOptions = {}): Promise<PostgresServer> {
  const user = isRoot() ? requirePostgresUser() : undefined;
  const binDir = options.binDir ?? findPostgresBinDir({ pathEnv: undefined });
  const bin = (name: string) => (binDir === null ? name : join(binDir, name));

  const ownDir = options.dataDir === undefined;
  const dataDir = options.dataDir ?? (await mkdtemp(join(tmpdir(), 'flowbox-pg-')));
  try {
    await mkdir(dataDir, { recursive: true });
    if (user !== undefined) await chown(dataDir, user.uid, user.gid);
    if (!existsSync(join(dataDir, 'PG_VERSION'))) await initdb(bin('initdb'), dataDir, user);

    const pickPort = options.port === undefined || options.port === 0;
    for (let attempt = 1; ; attempt++) {
      const port = pickPort ? await freePort() : (options.port ?? 0);
      const child = spawnManaged({
        name: 'postgres',
        command: bin('postgres'),
        args: [
          '-D',
          dataDir,
          '-p',
          String(port),
          '-c',
          'listen_addresses=127.0.0.1',
          '-c',
          `unix_socket_directories=${dataDir.length <= MAX_SOCKET_DIR_LENGTH ? dataDir : ''}`,
          '-c',
          `max_connections=${options.maxConnections ?? 300}`,
          '-c',
          'fsync=off',
          '-c',
          'synchronous_commit=off',
          '-c',
          'full_page_writes=off',
        ],
        cwd: dataDir,
        ...(user === undefined ? {} : { user }),
        // SIGINT is PostgreSQL's fast shutdown: it disconnects clients instead of waiting for them.
        parentDeathSignal: 'SIGINT',
      });
      try {
        await child.waitForLine(
          /database system is ready to accept connections/,
          options.readyTimeoutMs ?? 60_000,
        );
      } catch (error) {
        await child.stop('SIGKILL', 1_000);
        const exit = await child.exited;
        if (exit.missingBinary) throw new MissingBinaryError('postgres', INSTALL_HINTS.postgres);
        const portTaken = /could not bind|Address already in use/i.test(child.recentOutput());
        if (pickPort && portTaken && attempt < PORT_ATTEMPTS) continue;
        const hint = permissionHint(child.recentOutput(), user);
        throw hint === ''
          ? error
          : new ServiceStartError(`postgres failed to start${hint}`, child.recentOutput());
      }
      const url = `postgres://postgres@127.0.0.1:${port}/postgres`;
      return {
        port,
        pid: child.pid,
        url,
        dataDir,
        createDatabase: (name, template) => createDatabase(url, name, template),
        close: once(async () => {
          await child.stop('SIGINT', 15_000);
          if (ownDir) await rm(dataDir, { recursive: true, force: true });
        }),
      };
    }
  } catch (error) {
    if (ownDir) await rm(dataDir, { recursive: true, force: true });
    throw error;
  }
}

function requirePostgresUser(): SystemUser {
  const user = lookupSystemUser('postgres');
  if (user === null) {
    throw new Error(
      'PostgreSQL refuses to run as root and there is no `postgres` system user to run it as. ' +
        'Create one (`useradd --system postgres`) or run as an unprivileged user.',
    );
  }
  return user;
}

async function initdb(command: string, dataDir: string, user: SystemUser | undefined): Promise<void> {
  const child = spawnManaged({
    name: 'initdb',
    command,
    args: ['-D', dataDir, '-U', 'postgres', '--auth=trust', '--no-sync', '--encoding=UTF8', '--locale=C'],
    cwd: dataDir,
    ...(user === undefined ? {} : { user }),
    parentDeathSignal: 'SIGKILL',
  });
  const exit = await child.exited;
  if (exit.missingBinary) throw new MissingBinaryError('initdb', INSTALL_HINTS.postgres);
  if (exit.code !== 0) {
    const output = child.recentOutput();
    throw new ServiceStartError(
      `initdb failed (${describeExit(exit)})${permissionHint(output, user)}`,
      output,
    );
  }
}

function permissionHint(output: string, user: SystemUser | undefined): string {
  if (user === undefined || !/Permission denied/.test(output)) return '';
  return `: the ${user.name} user needs to reach the data directory (every parent directory searchable, e.g. chmod 755)`;
}
