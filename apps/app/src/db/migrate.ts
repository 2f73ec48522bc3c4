import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@flowbox/node-kit';
import type { Pool } from './pool.ts';

/** Any constant works; it only has to be the same for every app instance. */
const MIGRATION_LOCK_ID = 727_001;

export const MIGRATIONS_DIR = join(import.meta.dirname, '..', '..', 'migrations');

/**
 * Applies `migrations/NNNN_name.sql` in order, each in its own transaction, recording them in
 * `schema_migrations`. An advisory lock makes app instances that start together take turns.
 */
export async function migrate(pool: Pool, logger: Logger, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const client = await pool.connect();
  const applied: string[] = [];
  try {
    await client.query('SELECT pg_advisory_lock($1)', [MIGRATION_LOCK_ID]);
    await client.query(
      'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
    );
    const done = new Set(
      (await client.query<{ name: string }>('SELECT name FROM schema_migrations')).rows.map((r) => r.name),
    );
    for (const file of files) {
      if (done.has(file)) continue;
      const sql = await readFile(join(dir, file), 'utf8');
      await client.query('BEGIN');
      try {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        await client.query('COMMIT');
      } catch (error) {
        await client.query('ROLLBACK');
        throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error });
      }
      applied.push(file);
      logger.info({ migration: file }, 'applied migration');
    }
  } finally {
    await client.query('SELECT pg_advisory_unlock($1)', [MIGRATION_LOCK_ID]).catch(() => {});
    client.release();
  }
  return applied;
}
