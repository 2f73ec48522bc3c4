import { existsSync } from 'node:fs';
import { chmod, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isPortFree } from './free-port.ts';
import { type PostgresServer, startPostgresServer } from './postgres-server.ts';
import { isAlive } from './test-helpers.ts';

async function query<T>(url: string, sql: string): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query(sql)).rows as T[];
  } finally {
    await client.end();
  }
}

describe('startPostgresServer', () => {
  let postgres: PostgresServer;

  beforeAll(async () => {
    postgres = await startPostgresServer({});
  });

  afterAll(async () => {
    await postgres.close();
  });

  it('answers queries on 127.0.0.1 as user postgres, with fsync off', async () => {
    expect(postgres.url).toBe(`postgres://postgres@127.0.0.1:${postgres.port}/postgres`);
    const [row] = await query<{ user: string; fsync: string }>(
      postgres.url,
      `SELECT current_user AS user, current_setting('fsync') AS fsync`,
    );
    expect(row).toEqual({ user: 'postgres', fsync: 'off' });
  });

  it('creates databases, also from a template', async () => {
    const templateUrl = await postgres.createDatabase('template_for_test');
    await query(templateUrl, 'CREATE TABLE marker (id int); INSERT INTO marker VALUES (42)');
    const cloneUrl = await postgres.createDatabase('clone of "template"', 'template_for_test');
    expect(cloneUrl).toContain(`:${postgres.port}/clone%20of%20%22template%22`);
    expect(await query(cloneUrl, 'SELECT id FROM marker')).toEqual([{ id: 42 }]);
  });

  it('stops on close: process gone, port free, temporary data directory removed', async () => {
    const other = await startPostgresServer({});
    expect(existsSync(join(other.dataDir, 'PG_VERSION'))).toBe(true);
    await other.close();
    expect(isAlive(other.pid ?? -1)).toBe(false);
    expect(await isPortFree(other.port)).toBe(true);
    expect(existsSync(other.dataDir)).toBe(false);
  });

  it('keeps a data directory it was given and starts again from it', async () => {
    const parent = await mkdtemp(join(tmpdir(), 'flowbox-pg-test-'));
    const dataDir = join(parent, 'cluster');
    // mkdtemp makes a 0700 directory; the postgres user (when we are root) must be able to enter it.
    await chmod(parent, 0o755);
    try {
      const first = await startPostgresServer({ dataDir });
      await query(first.url, 'CREATE TABLE kept (id int)');
      await first.close();
      const second = await startPostgresServer({ dataDir });
      try {
        expect(await query(second.url, 'SELECT count(*)::int AS n FROM kept')).toEqual([{ n: 0 }]);
      } finally {
        await second.close();
      }
    } finally {
      await rm(parent, { recursive: true, force: true });
    }
  });
});
