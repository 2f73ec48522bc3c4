import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from '@flowbox/node-kit';
import type { Pool } from './pool.ts';

/** Any constant works; it only has to be the same for every app instance. */
const MIGRATION_LOCK_ID = 727_001;

export const MIGRATIONS_DIR = join(import.meta.dirname, '..', '..', 'migrations');

/**
 * Applies `migrations/NNNN_name.sql` in order, each in its own transaction, recording them in
 * `schema_migrations`. Each transaction first takes a transaction-scoped advisory lock, so app
 * instances that start together take turns, and the lock holds behind PgBouncer in transaction
 * mode too (a session lock would stay on whichever server connection took it).
 */
export async function migrate(pool: Pool, logger: Logger, dir = MIGRATIONS_DIR): Promise<string[]> {
  const files = (await readdir(dir)).filter((f) => /^\d{4}_[a-z0-9_]+\.sql$/.test(f)).sort();
  const applied: string[] = [];
  for (const file of files) {
    const sql = await readFile(join(dir, file), 'utf8');
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK_ID]);
      await client.query(
        'CREATE TABLE IF NOT EXISTS schema_migrations (name text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())',
      );
      const done = await client.query('SELECT 1 FROM schema_migrations WHERE name = $1', [file]);
      if (done.rowCount === 0) {
        await client.query(sql);
        await client.query('INSERT INTO schema_migrations (name) VALUES ($1)', [file]);
        applied.push(file);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw new Error(`migration ${file} failed: ${(error as Error).message}`, { cause: error });
    } finally {
      client.release();
    }
    if (applied.at(-1) === file) logger.info({ migration: file }, 'applied migration');
  }
  return applied;
}
