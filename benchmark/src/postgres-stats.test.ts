import { describe, expect, it } from 'vitest';
import { diffPostgres, type PostgresSnapshot, withUserAndDatabase } from './postgres-stats.ts';

const snapshot = (
  calls: Record<string, [string, number]> | null,
  transactions: number,
  own: number,
): PostgresSnapshot => ({
  statements:
    calls === null
      ? null
      : new Map(Object.entries(calls).map(([id, [query, n]]) => [id, { query, calls: n }])),
  transactions,
  ownTransactionsBefore: own,
});

describe('diffPostgres', () => {
  it('counts new calls per statement, transaction control apart, most frequent first', () => {
    const before = snapshot({ a: ['BEGIN', 10], b: ['UPDATE runs SET x = $1', 4] }, 100, 0);
    const after = snapshot(
      {
        a: ['BEGIN', 13],
        b: ['UPDATE runs SET x = $1', 10],
        c: ['INSERT INTO runs\n  VALUES ($1)', 3],
        d: ['COMMIT', 3],
      },
      112,
      2,
    );
    const delta = diffPostgres(before, after);
    expect(delta.statements).toBe(15);
    expect(delta.transactionControl).toBe(6);
    // 12 transactions, 2 of them the observer's settle queries.
    expect(delta.transactions).toBe(10);
    expect(delta.top.map((s) => [s.query, s.calls])).toEqual([
      ['UPDATE runs SET x = $1', 6],
      ['BEGIN', 3],
      ['COMMIT', 3],
      ['INSERT INTO runs VALUES ($1)', 3],
    ]);
  });

  it('reports transactions only without pg_stat_statements', () => {
    expect(diffPostgres(snapshot(null, 5, 0), snapshot(null, 9, 0))).toEqual({
      statements: null,
      transactionControl: null,
      transactions: 4,
      top: [],
    });
  });
});

describe('withUserAndDatabase', () => {
  it('swaps the user and the database, keeping host and options', () => {
    expect(
      withUserAndDatabase(
        'postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable',
        'observer',
        'bench_1',
      ),
    ).toBe('postgres://observer@127.0.0.1:5432/bench_1?sslmode=disable');
  });
});
