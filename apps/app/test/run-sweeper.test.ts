import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import { BENCHMARK_FLOW } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '../../../test/fixtures.ts';
import { createFlowsRepository } from '../src/db/flows-repository.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createRunsRepository, type RunsRepository } from '../src/db/runs-repository.ts';
import { LiveRuns } from '../src/live-runs.ts';
import { RunSweeper } from '../src/run-sweeper.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

describe('run sweeper', () => {
  let pool: Pool;
  let runs: RunsRepository;

  beforeAll(async () => {
    pool = createPool(await createTestDatabase(), 2);
    await migrate(pool, logger);
    await createFlowsRepository(pool).createFlow({ id: 'flow', name: 'flow', definition: BENCHMARK_FLOW });
    runs = createRunsRepository(pool);
  });
  afterAll(async () => {
    await pool.end();
  });

  /** A run in `status`, started `ageSeconds` ago (as its worker would have left it). */
  async function runStartedAgo(ageSeconds: number, running = true): Promise<string> {
    const id = randomUUID();
    await runs.create({ id, flowId: 'flow', flowVersionId: 'flow-v1', sync: true });
    if (running) {
      await runs.markRunning(id, 'gone-worker');
      await pool.query('UPDATE runs SET started_at = now() - make_interval(secs => $2) WHERE id = $1', [
        id,
        ageSeconds,
      ]);
    }
    return id;
  }

  it('finalises only RUNNING runs past the flow timeout plus grace, once', async () => {
    // Flow timeout 60 s: the deadline is 90 s after the start.
    const live = new LiveRuns({ ttlMs: 120_000 });
    const sweeper = new RunSweeper({ runs, live, logger, flowTimeoutSeconds: 60 });
    const overdue = await runStartedAgo(120);
    const recent = await runStartedAgo(30);
    const queued = await runStartedAgo(0, false);

    expect(await sweeper.sweep()).toEqual([overdue]);
    expect(await runs.get(overdue)).toMatchObject({
      status: 'TIMEOUT',
      error: { code: 'WORKER_LOST', message: 'no worker reported this run within 90s of its start' },
    });
    expect((await runs.get(recent))?.status).toBe('RUNNING');
    expect((await runs.get(queued))?.status).toBe('QUEUED');
    // The swept run's engine, should it still call back here, is refused from now on.
    expect(live.hasEnded(overdue)).toBe(true);
    expect(live.hasEnded(recent)).toBe(false);

    // A second pass finds nothing; a late report from the lost worker changes nothing.
    expect(await sweeper.sweep()).toEqual([]);
    expect(await runs.finish(overdue, { status: 'SUCCEEDED' })).toBe(false);
    expect((await runs.get(overdue))?.status).toBe('TIMEOUT');
  });
});
