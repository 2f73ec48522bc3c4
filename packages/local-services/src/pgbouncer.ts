import { chown, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { findPgbouncer, INSTALL_HINTS } from './find-binary.ts';
import { freePort } from './free-port.ts';
import { type LocalService, MissingBinaryError } from './local-service.ts';
import { spawnManaged } from './managed-process.ts';
import { once } from './once.ts';
import { isRoot, lookupSystemUser } from './system-user.ts';

export interface PgbouncerOptions {
  /** The Postgres server it pools: `postgres://user@host:port/…` (trust auth, as startPostgresServer's). */
  postgresUrl: string;
  /** `transaction`, as production poolers run, unless a test needs `session`. */
  poolMode?: 'transaction' | 'session';
  /** Server connections per database and user. */
  poolSize?: number;
  pathEnv?: string | undefined;
  readyTimeoutMs?: number;
}

export interface PgbouncerServer extends LocalService {
  port: number;
  pid: number;
  /** `postgres://…@127.0.0.1:<port>/pgbouncer`: the admin console (`SHOW STATS`, `SHOW POOLS`). */
  adminUrl: string;
  /** The same database through the pooler: `url` with the pooler's host and port. */
  urlFor(database: string): string;
  /** Transactions the pooler has passed to `database` so far (`SHOW STATS` on the admin console). */
  transactionsTo(database: string): Promise<number>;
}

/**
 * Starts PgBouncer on 127.0.0.1 in front of `postgresUrl`, every database passed through
 * (`* = …`). As root it runs as the `postgres` system user: PgBouncer refuses to run as root.
 */
export async function startPgbouncer(options: PgbouncerOptions): Promise<PgbouncerServer> {
  const binary = findPgbouncer({ pathEnv: options.pathEnv });
  if (binary === null) throw new MissingBinaryError('pgbouncer', INSTALL_HINTS.pgbouncer);
  const upstream = new URL(options.postgresUrl);
  const user = upstream.username || 'postgres';
  const runAs = isRoot() ? lookupSystemUser('postgres') : null;
  const dir = await mkdtemp(join(tmpdir(), 'flowbox-pgbouncer-'));
  const port = await freePort();
  const config = [
    '[databases]',
    `* = host=${upstream.hostname} port=${upstream.port || '5432'} user=${user}`,
    '[pgbouncer]',
    'listen_addr = 127.0.0.1',
    `listen_port = ${port}`,
    'unix_socket_dir =',
    // Trust upstream, as the test cluster does; clients name any user and are pooled as `user`.
    'auth_type = any',
    `admin_users = ${user}`,
    `pool_mode = ${options.poolMode ?? 'transaction'}`,
    `default_pool_size = ${options.poolSize ?? 20}`,
    'max_client_conn = 1000',
    // node-postgres sends these at startup; PgBouncer would refuse the connection otherwise.
    'ignore_startup_parameters = extra_float_digits,options',
    'logfile =',
    'pidfile =',
    '',
  ].join('\n');
  const configPath = join(dir, 'pgbouncer.ini');
  await writeFile(configPath, config);
  if (runAs !== null) await chown(dir, runAs.uid, runAs.gid);
  try {
    const child = spawnManaged({
      name: 'pgbouncer',
      command: binary,
      args: [configPath],
      cwd: dir,
      ...(runAs === null ? {} : { user: runAs }),
      parentDeathSignal: 'SIGINT',
    });
    await child.waitForLine(/process up|listening on 127\.0\.0\.1/, options.readyTimeoutMs ?? 15_000);
    const address = (database: string) => `postgres://${user}@127.0.0.1:${port}/${database}`;
    return {
      port,
      pid: child.pid,
      url: address(upstream.pathname.slice(1) || 'postgres'),
      adminUrl: address('pgbouncer'),
      urlFor: address,
      transactionsTo: async (database) => {
        const client = new pg.Client({ connectionString: address('pgbouncer') });
        await client.connect();
        try {
          // The admin console speaks only the simple query protocol: no parameters.
          const { rows } = await client.query<{ database: string; total_xact_count: string }>('SHOW STATS');
          return Number(rows.find((row) => row.database === database)?.total_xact_count ?? 0);
        } finally {
          await client.end();
        }
      },
      close: once(async () => {
        // SIGINT: PgBouncer's safe shutdown; it closes its server connections.
        await child.stop('SIGINT', 10_000);
        await rm(dir, { recursive: true, force: true });
      }),
    };
  } catch (error) {
    await rm(dir, { recursive: true, force: true });
    throw error;
  }
}
