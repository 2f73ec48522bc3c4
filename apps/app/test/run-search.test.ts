import { createLogger } from '@flowbox/node-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestPglite } from '../../../test/fixtures.ts';
import type { FlowboxApp } from '../src/app.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import {
  createRunSearch,
  likePattern,
  type RunSearch,
  type RunSearchQuery,
} from '../src/run-search/run-search.ts';
import { manage, postJson, startTestApp } from './app-harness.ts';

const RUNS = 3_000;
/** Small, so the searches below cross the bound several times. */
const SCAN_ROWS = 400;

/**
 * 3,000 runs of two flows (every 10th of beta), 1 ms apart. Every 37th body holds
 * `Needle 50%_off <i>`, every 250th is a text body holding `needle`; the others `plain <i>`.
 */
const INSERT_RUNS = `
  INSERT INTO runs (id, flow_id, flow_version_id, status, sync, created_at, trigger)
  SELECT md5(i::text)::uuid,
         CASE WHEN i % 10 = 0 THEN 'beta' ELSE 'alpha' END,
         CASE WHEN i % 10 = 0 THEN 'beta-v1' ELSE 'alpha-v1' END,
         CASE WHEN i % 7 = 0 THEN 'FAILED' ELSE 'SUCCEEDED' END,
         false,
         timestamptz '2026-01-01 00:00:00Z' + i * interval '1 millisecond',
         jsonb_build_object('method', 'POST', 'headers', '{}'::jsonb, 'query', '{}'::jsonb,
           'body', CASE WHEN i % 250 = 0 THEN to_jsonb('a needle in text ' || i)
                        WHEN i % 37 = 0 THEN jsonb_build_object('note', 'Needle 50%_off ' || i)
                        ELSE jsonb_build_object('note', 'plain ' || i) END)
  FROM generate_series(1, ${RUNS}) AS i`;

async function searchAll(search: RunSearch, query: Omit<RunSearchQuery, 'cursor'>) {
  const ids: string[] = [];
  let cursor: string | undefined;
  let pages = 0;
  let emptyPagesWithMore = 0;
  do {
    const page = await search.search({ ...query, cursor });
    ids.push(...page.runs.map((run) => run.id));
    cursor = page.nextCursor ?? undefined;
    if (page.runs.length === 0 && cursor !== undefined) emptyPagesWithMore += 1;
    pages += 1;
  } while (cursor !== undefined);
  return { ids, pages, emptyPagesWithMore };
}

describe('likePattern', () => {
  it('makes %, _ and the escape character stand for themselves', () => {
    expect(likePattern('50%_off\\')).toBe('%50\\%\\_off\\\\%');
  });
});

describe.each([
  ['postgres', async () => ({ url: await createTestDatabase(), close: async () => {} })],
  ['pglite', () => startTestPglite()],
])('run search on %s, with 3,000 runs', (_name, open) => {
  let pool: Pool;
  let close: () => Promise<void>;
  let search: RunSearch;

  async function expected(where: string, order: 'ASC' | 'DESC' = 'DESC') {
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
    search = createRunSearch(pool, SCAN_ROWS);
  }, 120_000);

  afterAll(async () => {
    await pool.end();
    await close();
  });

  it('finds every run whose payload holds the text, any case, newest first, each once', async () => {
    const { ids, emptyPagesWithMore } = await searchAll(search, {
      order: 'newest',
      limit: 20,
      payload: 'NEEDLE',
    });
    const needles = await expected(`trigger->>'body' ILIKE '%needle%'`);
    // Every 37th and every 250th run.
    expect(needles.length).toBe(Math.floor(RUNS / 37) + Math.floor(RUNS / 250));
    expect(ids).toEqual(needles);
    expect(emptyPagesWithMore).toBe(0);
  });

  it('reads at most its bound per request: a rare text takes pages, some empty, that go on', async () => {
    // Only run 2,997 (= 37 * 81) holds `off 2997`: 3 runs from the newest end.
    const first = await search.search({ order: 'oldest', limit: 20, payload: 'off 2997' });
    expect(first.runs).toEqual([]);
    expect(first.nextCursor).not.toBeNull();
    const { ids, pages, emptyPagesWithMore } = await searchAll(search, {
      order: 'oldest',
      limit: 20,
      payload: 'off 2997',
    });
    expect(ids).toEqual(await expected(`trigger->>'body' LIKE '%off 2997%'`));
    expect(ids).toHaveLength(1);
    expect(pages).toBe(Math.ceil(RUNS / SCAN_ROWS));
    expect(emptyPagesWithMore).toBe(pages - 1);
  });

  it('takes %, _ and a text body literally', async () => {
    const { ids } = await searchAll(search, { order: 'newest', limit: 50, payload: '50%_off' });
    expect(ids).toEqual(await expected(`trigger->>'body' LIKE '%Needle 50\\%\\_off%'`));
    expect(ids.length).toBe(Math.floor(RUNS / 37));
    const text = await searchAll(search, { order: 'newest', limit: 50, payload: 'in text' });
    expect(text.ids).toEqual(await expected(`jsonb_typeof(trigger->'body') = 'string'`));
    expect(text.ids).toHaveLength(Math.floor(RUNS / 250));
    // As wildcards they would match `plain 1…`.
    for (const payload of ['plain_1', 'plain%1']) {
      expect((await searchAll(search, { order: 'newest', limit: 50, payload })).ids, payload).toEqual([]);
    }
  });

  it('combines a creation range with the flow, status and payload filters', async () => {
    const since = new Date('2026-01-01T00:00:01.000Z');
    const until = new Date('2026-01-01T00:00:02.000Z');
    const range = `created_at >= '${since.toISOString()}' AND created_at < '${until.toISOString()}'`;
    expect((await searchAll(search, { order: 'newest', limit: 30, since, until })).ids).toEqual(
      await expected(range),
    );
    const narrow = await searchAll(search, {
      order: 'oldest',
      limit: 5,
      since,
      until,
      flowId: 'alpha',
      status: 'FAILED',
      payload: 'plain',
    });
    expect(narrow.ids).toEqual(
      await expected(
        `${range} AND flow_id = 'alpha' AND status = 'FAILED' AND trigger->>'body' LIKE '%plain%'`,
        'ASC',
      ),
    );
    expect(narrow.ids.length).toBeGreaterThan(5);
  });

  // A flow or status with fewer runs than the bound may be read whole and sorted: at most the bound.
  it('reads a range from the list’s indexes in their order, without sorting the table', async () => {
    const shapes: Array<[Omit<RunSearchQuery, 'limit' | 'cursor'>, string]> = [
      [{ order: 'newest', until: new Date('2026-01-01T00:00:02Z'), payload: 'needle' }, 'runs_page'],
      // A flow of most runs may be read from runs_page, skipping the others' rows: as cheap.
      [{ order: 'newest', flowId: 'alpha', payload: 'needle' }, 'runs_page(_flow)?'],
      [{ order: 'oldest', status: 'FAILED', until: new Date('2026-01-01T00:00:02Z') }, 'runs_page_status'],
    ];
    for (const [shape, index] of shapes) {
      const plan = await explain(pool, () => search.search({ ...shape, limit: 50 }));
      expect(plan, JSON.stringify(shape)).toMatch(
        new RegExp(`Index Scan( Backward)? using ${index} on runs`),
      );
      expect(plan, JSON.stringify(shape)).not.toMatch(/Sort|Seq Scan/);
    }
  });
});

describe('GET /v1/runs with payload and until', () => {
  let app: FlowboxApp;
  let url: string;

  beforeAll(async () => {
    ({ app, url } = await startTestApp());
  });
  afterAll(async () => {
    await app.close();
  });

  it('lists the runs whose payload holds the text within the range, and refuses bad filters', async () => {
    const created = await manage(url, 'POST', '/v1/flows', {
      id: 'search',
      name: 'search',
      definition: BENCHMARK_FLOW,
      publish: true,
    });
    expect(created.status).toBe(201);
    const runIds: string[] = [];
    for (const order of ['A-100', 'B-200', 'a-300']) {
      const answer = await postJson(`${url}/v1/webhooks/search`, { order });
      expect(answer.status).toBe(202);
      runIds.push(((await answer.json()) as { runId: string }).runId);
    }
    const list = async (query: string) => {
      const answer = await manage(url, 'GET', `/v1/runs?order=newest&${query}`);
      return { status: answer.status, body: (await answer.json()) as { runs: Array<{ id: string }> } };
    };
    const found = await list('payload=a-');
    expect(found.status).toBe(200);
    expect(found.body.runs.map((run) => run.id)).toEqual([runIds[2], runIds[0]]);
    const all = await list('flowId=search');
    const [newest] = all.body.runs;
    const created2 = (await (await manage(url, 'GET', `/v1/runs/${runIds[1]}`)).json()) as {
      createdAt: string;
    };
    expect(newest?.id).toBe(runIds[2]);
    const before = await list(`flowId=search&until=${encodeURIComponent(created2.createdAt)}`);
    expect(before.body.runs.map((run) => run.id)).toEqual([runIds[0]]);

    for (const bad of ['payload=', `payload=${'x'.repeat(201)}`, 'until=yesterday']) {
      const refused = await list(bad);
      expect(refused.status, bad).toBe(400);
      expect(refused.body).toMatchObject({ error: { code: 'INVALID_REQUEST' } });
    }
  });
});

/** The plan of the first statement `run` sends, with its parameters (a custom plan, as pg gets). */
async function explain(pool: Pool, run: () => Promise<unknown>): Promise<string> {
  const original = pool.query;
  const send = original.bind(pool) as (text: string, values: unknown[]) => Promise<unknown>;
  let statement: { text: string; values: unknown[] } | null = null;
  pool.query = (async (text: string, values: unknown[]) => {
    statement ??= { text, values };
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
