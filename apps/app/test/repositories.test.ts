import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestPglite } from '../../../test/fixtures.ts';
import { createFlowsRepository } from '../src/db/flows-repository.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createRunsRepository } from '../src/db/runs-repository.ts';
import { BENCHMARK_FLOW, BENCHMARK_FLOW_ID, seedBenchmarkFlow } from '../src/seed.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

// One contract, two adapters: a real Postgres server and embedded PGlite behind pglite-socket.
describe.each([
  ['postgres', async () => ({ url: await createTestDatabase(), close: async () => {} })],
  ['pglite', () => startTestPglite()],
])('repositories on %s', (_name, open) => {
  let pool: Pool;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await open();
    close = database.close;
    pool = createPool(database.url, 4);
  });

  afterAll(async () => {
    await pool.end();
    await close();
  });

  it('migrates once, then finds nothing left to apply', async () => {
    expect(await migrate(pool, logger)).toEqual(['0001_initial.sql']);
    expect(await migrate(pool, logger)).toEqual([]);
  });

  it('seeds the benchmark flow once, with a stable id', async () => {
    const flows = createFlowsRepository(pool);
    expect(await seedBenchmarkFlow(flows)).toBe(true);
    expect(await seedBenchmarkFlow(flows)).toBe(false);
    const published = await flows.findPublished(BENCHMARK_FLOW_ID);
    expect(published).toEqual({ flowId: BENCHMARK_FLOW_ID, flowVersionId: 'benchmark-v1', enabled: true });
    expect(await flows.getDefinition('benchmark-v1')).toEqual(BENCHMARK_FLOW);
    expect(await flows.findPublished('no-such-flow')).toBeNull();
  });

  it('takes a run from QUEUED to one final state, and only one', async () => {
    const runs = createRunsRepository(pool);
    const id = randomUUID();
    await runs.create({ id, flowId: BENCHMARK_FLOW_ID, flowVersionId: 'benchmark-v1', sync: true });
    expect((await runs.get(id))?.status).toBe('QUEUED');

    expect(await runs.markRunning(id, 'worker-1')).toBe(true);
    const step = {
      name: 'trigger',
      kind: 'webhook/catch_webhook',
      status: 'SUCCEEDED' as const,
      input: {},
      output: { hello: 'world' },
      startedAt: new Date().toISOString(),
      durationMs: 0.4,
    };
    expect(await runs.appendStep(id, step)).toBe(true);
    expect(await runs.appendStep(id, { ...step, name: 'step_1', output: { result: 5 } })).toBe(true);

    expect(await runs.finish(id, { status: 'SUCCEEDED', logKey: `runs/${id}/log.json` })).toBe(true);
    // A late verdict (say, the worker's after the engine's) does not overwrite the first.
    expect(
      await runs.finish(id, { status: 'FAILED', error: { name: 'E', code: 'WORKER_LOST', message: 'x' } }),
    ).toBe(false);
    expect(await runs.appendStep(id, { ...step, name: 'step_2' })).toBe(false);
    await runs.recordTimings(id, {
      queueMs: 1,
      provisionMs: 0,
      bootMs: 0,
      runMs: 3,
      logPersistMs: 1,
      workerBusyMs: 5,
    });

    const run = await runs.get(id);
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      workerId: 'worker-1',
      logKey: `runs/${id}/log.json`,
      error: null,
    });
    expect(run?.steps.map((s) => s.name)).toEqual(['trigger', 'step_1']);
    expect(run?.steps[1]?.output).toEqual({ result: 5 });
    expect(run?.timings?.runMs).toBe(3);
    expect(run?.timings?.totalMs).toBeGreaterThanOrEqual(0);
    expect(run?.finishedAt).toBeInstanceOf(Date);
  });

  it('finds no run for an unknown id', async () => {
    expect(await createRunsRepository(pool).get(randomUUID())).toBeNull();
  });
});
