import type { Pool } from '../db/pool.ts';

/**
 * The latest committed change number of the flows (migration 0019): every flow whose change is
 * numbered at or below it is visible to a statement that starts after this one.
 */
export async function changeSeq(pool: Pick<Pool, 'query'>): Promise<number> {
  const { rows } = await pool.query<{ seq: string }>('SELECT seq FROM trigger_change_seq');
  return Number(rows[0]?.seq ?? 0);
}
