import pg from 'pg';

export type Pool = pg.Pool;

/**
 * One pg pool per app. PGlite (served by pglite-socket for the embedded default) and a real
 * Postgres server speak the same wire protocol, so this is the only database driver.
 */
export function createPool(url: string, size: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: size, idleTimeoutMillis: 30_000 });
  // An idle client that loses its connection (server restart, pg_terminate_backend) emits
  // 'error' on the pool; without a listener that would crash the process.
  pool.on('error', () => {});
  return pool;
}
