import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { isPortFree } from './free-port.ts';
import { startPglite } from './pglite.ts';

describe('startPglite', () => {
  it('serves several pooled pg connections at once and frees its port on close', async () => {
    const pglite = await startPglite({});
    expect(pglite.url).toBe(`postgres://postgres@127.0.0.1:${pglite.port}/postgres?sslmode=disable`);
    const pool = new pg.Pool({ connectionString: pglite.url, max: 4 });
    try {
      await pool.query('CREATE TABLE items (id int PRIMARY KEY)');

      // Two connections checked out side by side.
      const a = await pool.connect();
      const b = await pool.connect();
      try {
        expect(pool.totalCount).toBe(2);
        const [ra, rb] = await Promise.all([a.query('SELECT 1 AS one'), b.query('SELECT 2 AS two')]);
        expect(ra.rows).toEqual([{ one: 1 }]);
        expect(rb.rows).toEqual([{ two: 2 }]);

        // An open transaction holds the single PGlite backend: b's query waits for a's COMMIT.
        await a.query('BEGIN');
        await a.query('INSERT INTO items VALUES (1)');
        const seenByB = b.query('SELECT count(*)::int AS n FROM items');
        await a.query('COMMIT');
        expect((await seenByB).rows).toEqual([{ n: 1 }]);
      } finally {
        a.release();
        b.release();
      }

      // Parameterised (extended protocol) queries from many connections do not mix up.
      const values = Array.from({ length: 200 }, (_, i) => i);
      const results = await Promise.all(
        values.map((i) => pool.query('SELECT $1::int AS v, $2::text AS s', [i, `s${i}`])),
      );
      expect(results.map((r) => r.rows[0])).toEqual(values.map((i) => ({ v: i, s: `s${i}` })));
    } finally {
      await pool.end();
      await pglite.close();
    }
    expect(await isPortFree(pglite.port)).toBe(true);
  });
});
