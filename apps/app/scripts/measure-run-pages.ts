/**
 * What the run inspector's queries cost on a large history: `N` runs (default 200,000, 5 ms
 * apart, so the last 5 minutes hold 60,000) in a fresh Postgres cluster started for the run;
 * each figure is the mean of 20 calls (10 for the stats) after one warm-up, in milliseconds,
 * with the load average before and after. Each run's trigger body is about 180 bytes of JSON.
 *
 *   node apps/app/scripts/measure-run-pages.ts [N]
 */
import { loadavg } from 'node:os';
import { startPostgresServer } from '@flowbox/local-services';
import { createLogger } from '@flowbox/node-kit';
import { migrate } from '../src/db/migrate.ts';
import { createPool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import { createRunSearch } from '../src/run-search/run-search.ts';
import type { RunPageQuery } from '../src/runs/run-page.ts';
import { createRunsRepository } from '../src/runs/runs-repository.ts';

const INSERT = (n: number) => `
  INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, timings, steps, trigger)
  SELECT md5(i::text)::uuid,
         CASE WHEN i % 50 = 0 THEN 'beta' ELSE 'alpha' END,
         CASE WHEN i % 50 = 0 THEN 'beta-v1' ELSE 'alpha-v1' END,
         CASE WHEN i % 97 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END, true,
         now() - (${n} - i) * interval '5 milliseconds',
         jsonb_build_object('totalMs', i % 100, 'queueMs', 1, 'provisionMs', 0, 'bootMs', 0, 'runMs', 3,
                            'logPersistMs', 0, 'workerBusyMs', 4),
         '[{"name":"trigger","kind":"webhook/catch_webhook","status":"SUCCEEDED","input":{},"startedAt":"2026-01-01T00:00:00Z","durationMs":0.1}]'::jsonb,
         jsonb_build_object('method', 'POST', 'headers', '{"content-type":"application/json"}'::jsonb,
           'query', '{}'::jsonb, 'body', jsonb_build_object('order', 'order-' || i, 'customer',
           'customer-' || (i % 1000), 'note', repeat('lorem ipsum ', 10)))
  FROM generate_series(1, ${n}) AS i`;

async function main(): Promise<void> {
  const n = Number(process.argv[2] ?? 200_000);
  const server = await startPostgresServer({});
  const pool = createPool(await server.createDatabase('measure'), 2);
  try {
    await migrate(pool, createLogger({ name: 'measure', level: 'silent' }));
    const flows = createFlowsRepository(pool);
    for (const id of ['alpha', 'beta']) await flows.createFlow({ id, name: id, definition: BENCHMARK_FLOW });
    await pool.query(INSERT(n));
    await pool.query('ANALYZE runs');
    const runs = createRunsRepository(pool);
    const time = async (label: string, work: () => Promise<unknown>, calls = 20) => {
      await work();
      const started = performance.now();
      for (let i = 0; i < calls; i += 1) await work();
      console.log(`${label}: ${((performance.now() - started) / calls).toFixed(2)} ms`);
    };
    const cursorAfter = async (query: RunPageQuery, pages: number) => {
      let cursor: string | undefined;
      for (let i = 0; i < pages; i += 1)
        cursor = (await runs.page({ ...query, cursor })).nextCursor ?? undefined;
      return cursor;
    };
    console.log(`${n} runs; load average ${loadavg()[0]?.toFixed(2)}`);
    const newest: RunPageQuery = { order: 'newest', limit: 50 };
    await time('first page of 50, newest first', () => runs.page(newest));
    const deep = await cursorAfter(newest, 1_000);
    await time('page 1,001 by cursor', () => runs.page({ ...newest, cursor: deep }));
    await time('the same rows by OFFSET 50000', () =>
      pool.query('SELECT id FROM runs ORDER BY created_at DESC, id DESC OFFSET 50000 LIMIT 50'),
    );
    await time('first page of flow beta (2 %)', () => runs.page({ ...newest, flowId: 'beta' }));
    await time('first page of FAILED runs (1 %)', () => runs.page({ ...newest, status: 'FAILED' }));
    await time('first page of beta and FAILED', () =>
      runs.page({ ...newest, flowId: 'beta', status: 'FAILED' }),
    );
    await time('stats, 300 s in 5 s buckets', () => runs.stats({ windowSeconds: 300, bucketSeconds: 5 }), 10);
    await time(
      'stats of flow beta',
      () => runs.stats({ flowId: 'beta', windowSeconds: 300, bucketSeconds: 5 }),
      10,
    );
    const search = createRunSearch(pool);
    await time('search: a payload text in every run (stops after 51)', () =>
      search.search({ ...newest, payload: 'LOREM' }),
    );
    await time('search: a payload text in one run (reads the 5,000-run bound)', () =>
      search.search({ ...newest, payload: 'order-17"' }),
    );
    await time('search: first page of a one-minute range ten minutes back', () =>
      search.search({
        ...newest,
        since: new Date(Date.now() - 660_000),
        until: new Date(Date.now() - 600_000),
      }),
    );
    console.log(`load average after: ${loadavg()[0]?.toFixed(2)}`);
  } finally {
    await pool.end();
    await server.close();
  }
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
