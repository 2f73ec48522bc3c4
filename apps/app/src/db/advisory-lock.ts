import type { Pool } from './pool.ts';

/**
 * Runs `work` while this app holds the session-level advisory lock `lockId`, or not at all when
 * another app holds it (one of them at a time does the work; the others skip this turn).
 * Resolves with whether it ran.
 */
export async function withAdvisoryLock(
  pool: Pool,
  lockId: number,
  work: () => Promise<void>,
): Promise<boolean> {
  const client = await pool.connect();
  try {
    const { rows } = await client.query<{ locked: boolean }>('SELECT pg_try_advisory_lock($1) AS locked', [
      lockId,
    ]);
    if (rows[0]?.locked !== true) return false;
    try {
      await work();
    } finally {
      await client.query('SELECT pg_advisory_unlock($1)', [lockId]).catch(() => {});
    }
    return true;
  } finally {
    client.release();
  }
}
