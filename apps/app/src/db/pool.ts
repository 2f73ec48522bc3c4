import pg from 'pg';

export type Pool = pg.Pool;

/** SQLSTATEs and socket errors that mean the connection died, not that the statement failed. */
const CONNECTION_LOST = new Set([
  '57P01',
  '57P02',
  '57P03',
  '08000',
  '08003',
  '08006',
  'ECONNRESET',
  'EPIPE',
]);

function lostConnection(error: unknown): boolean {
  if (typeof error !== 'object' || error === null) return false;
  const { code, message } = error as { code?: unknown; message?: unknown };
  if (typeof code === 'string' && CONNECTION_LOST.has(code)) return true;
  return typeof message === 'string' && /Connection terminated|not queryable/.test(message);
}

/**
 * One pg pool per app. PGlite (served by pglite-socket for the embedded default) and a real
 * Postgres server speak the same wire protocol, so this is the only database driver.
 *
 * `pool.query` runs a statement once more, on a fresh connection, when the pooled connection it
 * got had died (a server restart, `pg_terminate_backend`, a reset socket): without that, the one
 * request that drew a dead connection would fail although the database is fine. The run
 * statements are safe to repeat: the INSERT's key is the run id, the UPDATEs are guarded by
 * the run's status. Transactions (`pool.connect()`) are not retried.
 */
export function createPool(url: string, size: number): pg.Pool {
  const pool = new pg.Pool({ connectionString: url, max: size, idleTimeoutMillis: 30_000 });
  // An idle client that loses its connection (server restart, pg_terminate_backend) emits
  // 'error' on the pool; without a listener that would crash the process.
  pool.on('error', () => {});
  const query = pool.query.bind(pool) as (...args: unknown[]) => Promise<unknown>;
  pool.query = (async (...args: unknown[]) => {
    try {
      return await query(...args);
    } catch (error) {
      if (!lostConnection(error)) throw error;
      return query(...args);
    }
  }) as typeof pool.query;
  return pool;
}
