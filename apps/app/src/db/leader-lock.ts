import type { Pool } from './pool.ts';

/**
 * Runs `work` while this holder has the leader lock `name`, or not at all when another holder's
 * lock is still current (one of the apps does the work; the others skip this turn). Resolves with
 * whether it ran. (A job lease is another thing: queue/leased-job.ts.) A row of the `leases`
 * table rather than an advisory lock: a session lock would stay on
 * whichever server connection took it behind PgBouncer in transaction mode, and a transaction
 * held open through `work` would keep PGlite (one session for every connection) to itself. Each
 * statement stands alone; a holder that dies mid-work frees the lock after `ttlSeconds`.
 */
export async function withLeaderLock(
  pool: Pool,
  lock: { name: string; holder: string; ttlSeconds: number },
  work: () => Promise<void>,
): Promise<boolean> {
  const { rowCount } = await pool.query(
    `INSERT INTO leases (name, holder, expires_at) VALUES ($1, $2, now() + make_interval(secs => $3))
     ON CONFLICT (name) DO UPDATE SET holder = EXCLUDED.holder, expires_at = EXCLUDED.expires_at
     WHERE leases.expires_at < now() OR leases.holder = EXCLUDED.holder`,
    [lock.name, lock.holder, lock.ttlSeconds],
  );
  if (rowCount !== 1) return false;
  try {
    await work();
  } finally {
    await pool
      .query('UPDATE leases SET expires_at = now() WHERE name = $1 AND holder = $2', [lock.name, lock.holder])
      .catch(() => {});
  }
  return true;
}
