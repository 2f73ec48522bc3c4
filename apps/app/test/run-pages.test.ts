import { createLogger } from '@flowbox/node-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestPglite } from '../../../test/fixtures.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import type { RunPageQuery } from '../src/runs/run-page.ts';
import { createRunsRepository, type RunsRepository } from '../src/runs/runs-repository.ts';

const RUNS = 30_000;

/** A worker's timings with every part 0, and `totalMs` as given: rows read back are parsed. */
const timings = (totalMs: string) =>
  `jsonb_build_object('queueMs', 0, 'provisionMs', 0, 'bootMs', 0, 'runMs', 0, 'logPersistMs', 0, 'workerBusyMs', 0, 'totalMs', ${totalMs})`;

/**
 * 30,000 runs of two flows (every 50th of beta), created 10 µs apart (a hundred within each
 * millisecond, so a cursor with millisecond precision would skip or repeat runs), every 97th
 * FAILED, every 89th RUNNING.
 */
const INSERT_RUNS = `
  INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, timings)
  SELECT md5(i::text)::uuid,
         CASE WHEN i % 50 = 0 THEN 'beta' ELSE 'alpha' END,
         CASE WHEN i % 50 = 0 THEN 'beta-v1' ELSE 'alpha-v1' END,
         CASE WHEN i % 97 = 0 THEN 'FAILED' WHEN i % 89 = 0 THEN 'RUNNING' ELSE 'SUCCEEDED' END,
         true,
         timestamptz '2026-01-01 00:00:00Z' + i * interval '10 microseconds',
         ${timings('i % 100')}
  FROM generate_series(1, ${RUNS}) AS i`;

async function readAll(runs: RunsRepository, query: Omit<RunPageQuery, 'cursor'>) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  do {
    const page = await runs.page({ ...query, cursor });
    ids.push(...page.runs.map((run) => run.id));
    cursor = page.nextCursor ?? undefined;
    pages += 1;
  } while (cursor !== undefined);
  return { ids, pages };
}

// One contract, two adapters, as repositories.test.ts.
describe.each([
  ['postgres', async () => ({ url: await createTestDatabase(), close: async () => {} })],
  ['pglite', () => startTestPglite()],
])('run pages on %s, with 30,000 runs', (_name, open) => {
  let pool: Pool;
  let close: () => Promise<void>;
  let runs: RunsRepository;

  /** What the pages must give: the ids in the order and under the filters, from plain SQL. */
  async function expected(where: string, order: 'ASC' | 'DESC') {
    const { rows } = await pool.query<{ id: string }>(
      `SELECT id FROM runs WHERE ${where} ORDER BY created_at ${order}, id ${order}`,
    );
    return rows.map((row) => row.id);
  }

  beforeAll(async () => {
    const database = await open();
    close = database.close;
    pool = createPool(database.url, 2);
    await migrate(pool, createLogger({ name: 'test', level: 'silent' }));
    const flows = createFlowsRepository(pool);
    for (const id of ['alpha', 'beta']) await flows.createFlow({ id, name: id, definition: BENCHMARK_FLOW });
    await pool.query(INSERT_RUNS);
    await pool.query('ANALYZE runs');
    runs = createRunsRepository(pool);
  }, 120_000);

  afterAll(async () => {
    await pool.end();
    await close();
  });

  it('pages through every run newest first, each once, in order', async () => {
    const { ids, pages } = await readAll(runs, { order: 'newest', limit: 1_000 });
    expect(pages).toBe(RUNS / 1_000);
    expect(ids).toEqual(await expected('true', 'DESC'));
  });

  it('filters by flow, by status and by both, newest or oldest first', async () => {
    const flow = await readAll(runs, { flowId: 'beta', order: 'newest', limit: 70 });
    expect(flow.ids).toEqual(await expected("flow_id = 'beta'", 'DESC'));
    expect(flow.ids.length).toBe(RUNS / 50);

    const failed = await readAll(runs, { status: 'FAILED', order: 'newest', limit: 50 });
    expect(failed.ids).toEqual(await expected("status = 'FAILED'", 'DESC'));
    expect(failed.ids.length).toBe(Math.floor(RUNS / 97));

    const both = await readAll(runs, { flowId: 'alpha', status: 'RUNNING', order: 'oldest', limit: 20 });
    expect(both.ids).toEqual(await expected("flow_id = 'alpha' AND status = 'RUNNING'", 'ASC'));
    expect(both.ids.length).toBeGreaterThan(100);
  });

  it('reads forward from a moment, oldest first (the benchmark reads runs this way)', async () => {
    const since = new Date('2026-01-01T00:00:00.200Z');
    const page = await runs.page({ flowId: 'alpha', since, order: 'oldest', limit: 5 });
    expect(page.runs.map((run) => run.createdAt.getTime() >= since.getTime())).toEqual(Array(5).fill(true));
    expect(page.runs.map((run) => run.id)).toEqual(
      (await expected("flow_id = 'alpha' AND created_at >= '2026-01-01T00:00:00.200Z'", 'ASC')).slice(0, 5),
    );
    expect(page.runs[0]).not.toHaveProperty('steps');
  });

  it('refuses a cursor it did not give', async () => {
    await expect(runs.page({ order: 'newest', limit: 10, cursor: 'bm9wZQ' })).rejects.toMatchObject({
      code: 'INVALID_REQUEST',
    });
  });

  // The planner may read a common flow (alpha) from runs_page and skip the others' rows: as
  // cheap. A rare flow or status must come from its own index.
  it('reads each filter shape from its own index, without sorting the table', async () => {
    const shapes: Array<[Omit<RunPageQuery, 'limit' | 'cursor'>, string]> = [
      [{ order: 'newest' }, 'runs_page'],
      [{ order: 'newest', flowId: 'beta' }, 'runs_page_flow'],
      [{ order: 'newest', status: 'FAILED' }, 'runs_page_status'],
      [{ order: 'oldest', flowId: 'beta', status: 'FAILED' }, 'runs_page_flow_status'],
    ];
    for (const [shape, index] of shapes) {
      // A second page: where a user's next click starts.
      const next = (await runs.page({ ...shape, limit: 1 })).nextCursor ?? undefined;
      expect(next).toBeDefined();
      const plan = await explain(pool, () => runs.page({ ...shape, cursor: next, limit: 50 }));
      expect(plan, JSON.stringify(shape)).toMatch(
        new RegExp(`Index Scan( Backward)? using ${index} on runs`),
      );
      expect(plan, JSON.stringify(shape)).not.toMatch(/Sort|Seq Scan/);
    }
  });
});

describe('run stats', () => {
  let pool: Pool;
  let runs: RunsRepository;

  beforeAll(async () => {
    pool = createPool(await createTestDatabase(), 2);
    await migrate(pool, createLogger({ name: 'test', level: 'silent' }));
    const flows = createFlowsRepository(pool);
    for (const id of ['alpha', 'beta']) await flows.createFlow({ id, name: id, definition: BENCHMARK_FLOW });
    runs = createRunsRepository(pool);
  });

  afterAll(async () => {
    await pool.end();
  });

  it('answers every bucket of the window, empty, when no run was accepted in it', async () => {
    const stats = await runs.stats({ windowSeconds: 60, bucketSeconds: 10 });
    // 60 s of 10 s buckets, aligned: 6 or 7 of them depending on where now falls.
    expect(stats.buckets.length).toBeGreaterThanOrEqual(6);
    expect(stats.buckets.length).toBeLessThanOrEqual(7);
    expect(stats.buckets.every((b) => b.succeeded + b.failed + b.inFlight === 0 && b.p50Ms === null)).toBe(
      true,
    );
    expect(stats.total).toEqual({
      succeeded: 0,
      failed: 0,
      inFlight: 0,
      p50Ms: null,
      p95Ms: null,
      p99Ms: null,
    });
  });

  it('counts runs by outcome and takes exact latency percentiles, per bucket and in total', async () => {
    // 100 alpha runs in the last minute with totalMs 1..100, 3 failed, 2 in flight; beta runs
    // and runs older than the window must not count.
    await pool.query(`
      INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, timings)
      SELECT gen_random_uuid(), 'alpha', 'alpha-v1',
             CASE WHEN i <= 3 THEN 'FAILED' ELSE 'SUCCEEDED' END, true,
             now() - interval '20 seconds', ${timings('i')}
      FROM generate_series(1, 100) AS i;
      INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at)
      SELECT gen_random_uuid(), 'alpha', 'alpha-v1', 'RUNNING', true, now() FROM generate_series(1, 2);
      INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, timings)
      SELECT gen_random_uuid(), 'alpha', 'alpha-v1', 'SUCCEEDED', true, now() - interval '2 hours',
             ${timings('100000')}
      FROM generate_series(1, 10);
      INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, timings)
      VALUES (gen_random_uuid(), 'beta', 'beta-v1', 'SUCCEEDED', true, now(), ${timings('5000')});`);
    const stats = await runs.stats({ flowId: 'alpha', windowSeconds: 60, bucketSeconds: 5 });
    expect(stats.total).toEqual({
      succeeded: 97,
      failed: 3,
      inFlight: 2,
      p50Ms: 50.5,
      p95Ms: 95.1,
      p99Ms: 99,
    });
    const busy = stats.buckets.filter((b) => b.succeeded + b.failed + b.inFlight > 0);
    expect(busy.map((b) => [b.succeeded, b.failed, b.inFlight])).toEqual([
      [97, 3, 0],
      [0, 0, 2],
    ]);
    expect(busy[0]?.p99Ms).toBe(99);
    const all = await runs.stats({ windowSeconds: 60, bucketSeconds: 5 });
    expect(all.total.succeeded).toBe(98);
    expect(all.total.p99Ms).toBeGreaterThan(99);
  });
});

/** The plan of the one statement `run` sends, with its parameters (a custom plan, as pg gets). */
async function explain(pool: Pool, run: () => Promise<unknown>): Promise<string> {
  const original = pool.query;
  const send = original.bind(pool) as (text: string, values: unknown[]) => Promise<unknown>;
  let statement: { text: string; values: unknown[] } | null = null;
  pool.query = (async (text: string, values: unknown[]) => {
    statement = { text, values };
    return send(text, values);
  }) as typeof pool.query;
  try {
    await run();
  } finally {
    pool.query = original;
  }
  const captured = statement as { text: string; values: unknown[] } | null;
  if (captured === null) throw new Error('no statement was sent');
  const { rows } = await pool.query<{ 'QUERY PLAN': string }>(`EXPLAIN ${captured.text}`, captured.values);
  return rows.map((row) => row['QUERY PLAN']).join('\n');
}
