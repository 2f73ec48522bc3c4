import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, startTestPglite } from '../../../test/fixtures.ts';
import { createConnectionsRepository } from '../src/connections/connections-repository.ts';
import { migrate } from '../src/db/migrate.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { createFlowsRepository } from '../src/flows/flows-repository.ts';
import { BENCHMARK_FLOW } from '../src/flows/seed.ts';
import { createPiecesRepository } from '../src/pieces/pieces-repository.ts';
import { createRunsRepository } from '../src/runs/runs-repository.ts';
import { createSchedulesRepository, type TickInput } from '../src/schedules/schedules-repository.ts';
import { TEST_TRIGGER } from './run-fixtures.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const SHA = 'a'.repeat(64);
const TRIGGER = TEST_TRIGGER;

// One contract, two adapters: a real Postgres server and embedded PGlite behind pglite-socket.
describe.each([
  ['postgres', async () => ({ url: await createTestDatabase(), close: async () => {} })],
  ['pglite', () => startTestPglite()],
])('repositories on %s', (_name, open) => {
  let pool: Pool;
  let url: string;
  let close: () => Promise<void>;

  beforeAll(async () => {
    const database = await open();
    close = database.close;
    url = database.url;
    pool = createPool(url, 4);
  });

  afterAll(async () => {
    await pool.end();
    await close();
  });

  it('migrates once, then finds nothing left to apply', async () => {
    expect(await migrate(pool, logger)).toEqual([
      '0001_initial.sql',
      '0002_artifacts.sql',
      '0003_attempts.sql',
      '0004_run_pages.sql',
      '0005_run_requeue.sql',
      '0006_rerun_retention.sql',
      '0007_run_rank.sql',
      '0008_piece_registry.sql',
      '0009_connections.sql',
      '0010_piece_yanks.sql',
      '0011_run_isolation.sql',
      '0012_refused_deliveries.sql',
      '0013_error_flows.sql',
      '0014_idempotency_keys.sql',
      '0015_schedules.sql',
      '0016_durable_runs.sql',
      '0017_polling.sql',
      '0018_run_waits_pause.sql',
      '0019_trigger_changes.sql',
    ]);
    expect(await migrate(pool, logger)).toEqual([]);
  });

  it('creates flows with numbered versions and publishes one with its bundle', async () => {
    const flows = createFlowsRepository(pool);
    const v1 = await flows.createFlow({ id: 'bench', name: 'Bench', definition: BENCHMARK_FLOW });
    expect(v1).toMatchObject({ id: 'bench-v1', flowId: 'bench', number: 1, bundle: null, publishedAt: null });
    expect(await flows.createFlow({ id: 'bench', name: 'again', definition: BENCHMARK_FLOW })).toBeNull();
    // Not published yet: a webhook must not find it.
    expect(await flows.findPublished('bench')).toBeNull();

    const v2 = await flows.addVersion('bench', BENCHMARK_FLOW);
    expect(v2).toMatchObject({ id: 'bench-v2', number: 2 });
    const bundle = {
      key: `bundles/bench-v2/${SHA}.json`,
      sha256: SHA,
      sizeBytes: 42,
      pieces: [{ name: 'webhook', version: '1.0.0' }],
    };
    await flows.publish('bench-v2', bundle, []);
    expect(await flows.findPublished('bench')).toEqual({
      flowId: 'bench',
      flowVersionId: 'bench-v2',
      enabled: true,
      runWhenCallerGone: false,
      verify: null,
      triggerPiece: 'webhook',
      triggerPolls: false,
      errorResponse: null,
    });
    expect((await flows.getVersion('bench-v2'))?.bundle).toEqual(bundle);
    expect((await flows.listVersions('bench')).map((v) => [v.id, v.publishedAt !== null])).toEqual([
      ['bench-v1', false],
      ['bench-v2', true],
    ]);

    // A tick is recorded once with its run, and only for the published version of an enabled flow.
    const schedules = createSchedulesRepository(pool, { maxQueued: 0 });
    const fire = async (one: TickInput) => (await schedules.fireMany([one]))[0];
    const tick = {
      runId: randomUUID(),
      flowId: 'bench',
      flowVersionId: 'bench-v2',
      scheduledAt: new Date('2026-11-29T09:00:00Z'),
      trigger: TRIGGER,
      missed: 0,
      overlap: 'allow' as const,
      passOver: false,
    };
    expect(await fire(tick)).toEqual({ outcome: 'fired', rank: 1 });
    expect(await fire({ ...tick, runId: randomUUID() })).toEqual({ outcome: 'duplicate' });
    expect(await fire({ ...tick, flowVersionId: 'bench-v1', scheduledAt: new Date() })).toEqual({
      outcome: 'stale',
    });
    const skipped = {
      ...tick,
      runId: randomUUID(),
      overlap: 'skip' as const,
      scheduledAt: new Date('2026-11-29T09:01:00Z'),
    };
    expect(await fire(skipped)).toEqual({ outcome: 'skipped', reason: 'overlap' });
    expect((await schedules.passedTicks('bench', 5)).map((t) => t.reason)).toEqual(['overlap']);
    expect((await pool.query('SELECT source FROM runs WHERE id = $1', [tick.runId])).rows).toEqual([
      { source: 'schedule' },
    ]);
    expect(await flows.update('bench', { enabled: false })).toMatchObject({ enabled: false, name: 'Bench' });
    expect(await fire({ ...tick, scheduledAt: new Date() })).toEqual({ outcome: 'stale' });
    expect((await flows.findPublished('bench'))?.enabled).toBe(false);
    expect(await flows.update('no-such-flow', { enabled: true })).toBeNull();
    expect((await flows.listFlows()).map((f) => f.id)).toEqual(['bench']);
  });

  it('loads a stored definition holding keys it does not know, dropping them', async () => {
    const flows = createFlowsRepository(pool);
    await flows.createFlow({ id: 'written-later', name: 'w', definition: BENCHMARK_FLOW });
    // As a newer app would have written it: a key at the top, in the trigger and in a step.
    await pool.query(
      `UPDATE flow_versions SET definition = jsonb_set(jsonb_set(definition || '{"later": 1}',
         '{trigger,note}', '"x"'), '{steps,0,cacheFor}', '{"seconds": 3}') WHERE id = 'written-later-v1'`,
    );
    const { rows } = await pool.query<{ later: number; cache_for: unknown }>(
      "SELECT definition->'later' AS later, definition->'steps'->0->'cacheFor' AS cache_for FROM flow_versions WHERE id = 'written-later-v1'",
    );
    expect(rows[0]).toEqual({ later: 1, cache_for: { seconds: 3 } });
    expect((await flows.getVersion('written-later-v1'))?.definition).toEqual(BENCHMARK_FLOW);
  });

  it('creates or adds nothing when the publish asked with it throws', async () => {
    const flows = createFlowsRepository(pool);
    const refuse = async (): Promise<never> => {
      throw new Error('refused');
    };
    await expect(
      flows.createFlow({ id: 'refused', name: 'r', definition: BENCHMARK_FLOW }, refuse),
    ).rejects.toThrow('refused');
    expect(await flows.getFlow('refused')).toBeNull();
    expect(await flows.listVersions('refused')).toEqual([]);

    const published = await flows.createFlow(
      { id: 'kept', name: 'k', definition: BENCHMARK_FLOW },
      async () => ({
        bundle: { key: 'k', sha256: SHA, sizeBytes: 1, pieces: [] },
        connections: [],
      }),
    );
    expect(published).toMatchObject({ id: 'kept-v1', publishedAt: expect.any(Date) });
    expect((await flows.getFlow('kept'))?.publishedVersionId).toBe('kept-v1');
    await expect(flows.addVersion('kept', BENCHMARK_FLOW, refuse)).rejects.toThrow('refused');
    expect((await flows.listVersions('kept')).map((v) => v.id)).toEqual(['kept-v1']);
  });

  it('keeps sealed connections, lists their users and refuses to delete one a published version names', async () => {
    const connections = createConnectionsRepository(pool);
    const flows = createFlowsRepository(pool);
    const sealed = {
      ciphertext: Buffer.from([1, 2, 0, 255]),
      iv: Buffer.alloc(12, 7),
      authTag: Buffer.alloc(16, 9),
      keyId: 'k1',
    };
    expect(await connections.create('api', sealed)).toBe(true);
    expect(await connections.create('api', sealed)).toBe(false);
    expect(await connections.create('spare', { ...sealed, keyId: 'k0' })).toBe(true);
    expect(await connections.sealed(['api', 'gone'])).toEqual([{ name: 'api', ...sealed }]);
    expect(await connections.existing(['api', 'gone'])).toEqual(new Set(['api']));
    expect(await connections.countByKey()).toEqual(
      new Map([
        ['k1', 1],
        ['k0', 1],
      ]),
    );

    await flows.createFlow({ id: 'uses-api', name: 'u', definition: BENCHMARK_FLOW });
    await flows.publish('uses-api-v1', { key: 'k', sha256: SHA, sizeBytes: 1, pieces: [] }, ['api']);
    expect((await flows.getVersion('uses-api-v1'))?.connections).toEqual(['api']);
    expect((await connections.get('api'))?.usedBy).toEqual([
      { flowId: 'uses-api', flowVersionId: 'uses-api-v1' },
    ]);
    expect(await connections.delete('api')).toEqual({
      result: 'in-use',
      usedBy: [{ flowId: 'uses-api', flowVersionId: 'uses-api-v1' }],
    });
    expect(await connections.delete('spare')).toEqual({ result: 'deleted' });
    expect(await connections.delete('spare')).toEqual({ result: 'missing' });
    // A deleted flow's versions no longer hold their connections.
    await flows.delete('uses-api');
    expect(await connections.delete('api')).toEqual({ result: 'deleted' });
  });

  it('records piece versions once: a second insert of the same version changes nothing', async () => {
    const pieces = createPiecesRepository(pool);
    const manifest = {
      name: 'webhook',
      version: '1.0.0',
      entry: 'index.mjs' as const,
      actions: ['a'],
      triggers: [],
    };
    const first = {
      name: 'webhook',
      version: '1.0.0',
      archiveKey: 'k1',
      sha256: SHA,
      sizeBytes: 1,
      manifest,
      nodeBuiltins: ['fs'],
      actions: [{ name: 'a', description: 'A.', inputSchema: { type: 'object' } }],
    };
    expect(await pieces.insert(first)).toMatchObject({ outcome: 'created', piece: first });
    const [again, other] = await Promise.all([
      pieces.insert(first),
      pieces.insert({ ...first, archiveKey: 'k2', sha256: 'b'.repeat(64), sizeBytes: 2 }),
    ]);
    expect(again).toMatchObject({ outcome: 'exists', piece: first });
    expect(other).toMatchObject({ outcome: 'exists', piece: first });
    expect(await pieces.list()).toEqual([{ ...first, publishedAt: expect.any(Date), yankedAt: null }]);

    // bench-v2, published above, pins webhook@1.0.0: a yank is refused naming it, unless forced.
    expect(await pieces.yank('webhook', '1.0.0', false)).toEqual({
      result: 'in-use',
      usedBy: [expect.objectContaining({ flowId: 'bench', flowVersionId: 'bench-v2' })],
    });
    expect((await pieces.get('webhook', '1.0.0'))?.yankedAt).toBeNull();
    const yanked = await pieces.yank('webhook', '1.0.0', true);
    expect(yanked).toMatchObject({ result: 'yanked', piece: { ...first, yankedAt: expect.any(Date) } });
    // Yanked once: a second yank keeps the first time.
    expect(await pieces.yank('webhook', '1.0.0', true)).toEqual(yanked);
    expect(await pieces.yank('webhook', '9.9.9', true)).toEqual({ result: 'missing' });
  });

  it('takes a run from QUEUED to one final state, and only one', async () => {
    const runs = createRunsRepository(pool);
    const id = randomUUID();
    await runs.create({
      id,
      flowId: 'bench',
      flowVersionId: 'bench-v2',
      sync: true,
      trigger: TRIGGER,
      syncInstanceId: 'app-1',
    });
    expect((await runs.get(id))?.status).toBe('QUEUED');

    expect(await runs.markRunning(id, 'worker-1')).toBe('started');
    const step = {
      name: 'trigger',
      kind: 'webhook/catch_webhook',
      status: 'SUCCEEDED' as const,
      input: {},
      output: { hello: 'world' },
      startedAt: new Date().toISOString(),
      durationMs: 0.4,
    };
    const provisioning = {
      bundle: 'hit' as const,
      pieceHits: 2,
      pieceMisses: 0,
      engine: { pid: 123, jobsServed: 7, preBooted: true },
    };
    const timings = { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 3, logPersistMs: 1, workerBusyMs: 5 };
    expect((await runs.get(id))?.isolation).toBeNull();
    // The whole record in one statement: status, steps, log, timings, provisioning and isolation.
    const finished = await runs.finish(id, {
      outcome: {
        status: 'SUCCEEDED',
        steps: [step, { ...step, name: 'step_1', output: { result: 5 } }],
        logKey: `runs/${id}/log.json`,
      },
      timings,
      provisioning,
      isolation: 'process',
    });
    expect(finished.finalised).toBe(true);
    // A late verdict does not overwrite the first: neither its status nor its steps.
    expect(
      await runs.finish(id, {
        outcome: {
          status: 'INTERNAL_ERROR',
          error: { name: 'E', code: 'WORKER_LOST', message: 'x' },
          steps: [{ ...step, name: 'step_2' }],
          logKey: null,
        },
      }),
    ).toEqual({ finalised: false, totalMs: null });

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
    // What the metrics observe is what the row holds.
    expect(finished.totalMs).toBe(run?.timings?.totalMs);
    expect(run?.provisioning).toEqual(provisioning);
    expect(run?.isolation).toBe('process');
    expect(run?.finishedAt).toBeInstanceOf(Date);
  });

  it("records a log upload that failed after the run's result only on that final run, its worker and key", async () => {
    const runs = createRunsRepository(pool);
    const id = randomUUID();
    await runs.create({
      id,
      flowId: 'bench',
      flowVersionId: 'bench-v2',
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    });
    await runs.markRunning(id, 'worker-1');
    const logKey = `runs/${id}/log.json`;
    const logError = { name: 'FlowboxError', code: 'LOG_UPLOAD_FAILED' as const, message: 'S3 answered 503' };
    const failure = { runId: id, logKey, workerId: 'worker-1', logError };
    // Not final yet (its result has not been recorded): nothing changes.
    expect(await runs.recordLogFailure(failure)).toBe(false);
    await runs.finish(id, { outcome: { status: 'SUCCEEDED', steps: [], logKey } });
    // Another worker's, or another key's: nothing changes.
    expect(await runs.recordLogFailure({ ...failure, workerId: 'worker-2' })).toBe(false);
    expect(await runs.recordLogFailure({ ...failure, logKey: 'runs/other/log.json' })).toBe(false);
    expect(await runs.get(id)).toMatchObject({ status: 'SUCCEEDED', logKey, logError: null });

    expect(await runs.recordLogFailure(failure)).toBe(true);
    expect(await runs.get(id)).toMatchObject({ status: 'SUCCEEDED', logKey: null, logError });
    // Once: the key is gone.
    expect(await runs.recordLogFailure(failure)).toBe(false);
  });

  it("adds a late result's timings to a run something else finalised first", async () => {
    const runs = createRunsRepository(pool);
    const id = randomUUID();
    await runs.create({
      id,
      flowId: 'bench',
      flowVersionId: 'bench-v2',
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    });
    await runs.markRunning(id, 'worker-1');
    const sweeperError = { name: 'E', code: 'RUN_ABANDONED' as const, message: 'overdue' };
    expect(await runs.finish(id, { outcome: { status: 'TIMEOUT', error: sweeperError } })).toEqual({
      finalised: true,
      totalMs: null,
    });
    const timings = { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 9, logPersistMs: 1, workerBusyMs: 11 };
    expect(
      (await runs.finish(id, { outcome: { status: 'SUCCEEDED', steps: [], logKey: 'k' }, timings }))
        .finalised,
    ).toBe(false);
    const run = await runs.get(id);
    expect(run).toMatchObject({ status: 'TIMEOUT', error: sweeperError, logKey: null, steps: [] });
    expect(run?.timings?.runMs).toBe(9);
  });

  it("bounds a flow's waiting and running runs, ranks each run within its flow, and ends unstarted runs", async () => {
    await createFlowsRepository(pool).createFlow({
      id: 'capped',
      name: 'Capped',
      definition: BENCHMARK_FLOW,
    });
    const runs = createRunsRepository(pool, {
      preparedStatements: true,
      bounds: { maxQueued: 2, maxRunning: 1 },
    });
    const create = (id: string) =>
      runs.create({
        id,
        flowId: 'capped',
        flowVersionId: 'capped-v1',
        sync: true,
        trigger: TRIGGER,
        syncInstanceId: null,
      });
    const [a, b, c, d] = [randomUUID(), randomUUID(), randomUUID(), randomUUID()];
    expect(await create(a)).toEqual({ rank: 1 });
    expect(await create(b)).toEqual({ rank: 2 });
    // Two wait: the third is refused, and no row exists for it.
    expect(await create(c)).toBeNull();
    expect(await runs.get(c)).toBeNull();
    // One runs at most: the second waits while the first runs.
    expect(await runs.markRunning(a, 'worker-1')).toBe('started');
    expect(await runs.markRunning(b, 'worker-2')).toBe('busy');
    expect((await runs.get(b))?.status).toBe('QUEUED');
    // A running run does not count against the waiting ones; it does count in the rank.
    expect(await create(c)).toEqual({ rank: 3 });
    expect(await create(d)).toBeNull();

    // An unstarted run ends FAILED; a started one, or one ended already, is left alone.
    const gone = { name: 'CallerGone', code: 'CALLER_GONE' as const, message: 'left' };
    expect(await runs.abandon(c, gone)).toBe(true);
    expect(await runs.get(c)).toMatchObject({ status: 'FAILED', error: gone });
    expect(await runs.abandon(c, gone)).toBe(false);
    expect(await runs.abandon(a, gone)).toBe(false);
    expect(await runs.markRunning(c, 'worker-2')).toBe('ended');

    expect(
      (await runs.finish(a, { outcome: { status: 'SUCCEEDED', steps: [], logKey: null } })).finalised,
    ).toBe(true);
    expect(await runs.markRunning(b, 'worker-2')).toBe('started');
    expect(
      (await runs.finish(b, { outcome: { status: 'SUCCEEDED', steps: [], logKey: null } })).finalised,
    ).toBe(true);

    // A paused run's due resume job waits for the cap as a first start does; the run stays PAUSED.
    const [e, f] = [randomUUID(), randomUUID()];
    expect(await create(e)).toEqual({ rank: 1 });
    expect(await runs.markRunning(e, 'worker-1')).toBe('started');
    await pool.query("UPDATE runs SET status = 'PAUSED', paused_at = now() WHERE id = $1", [e]);
    expect(await create(f)).toEqual({ rank: 1 });
    expect(await runs.markRunning(f, 'worker-2')).toBe('started');
    expect(await runs.markRunning(e, 'worker-1', 1)).toBe('busy');
    expect(await runs.get(e)).toMatchObject({ status: 'PAUSED', resumes: 0 });
    await runs.finish(f, { outcome: { status: 'SUCCEEDED', steps: [], logKey: null } });
    expect(await runs.markRunning(e, 'worker-1', 1)).toBe('resumed');
    expect(await runs.get(e)).toMatchObject({ status: 'RUNNING', resumes: 1, attempts: 1 });
  });

  it('ranks a run after every run of its flow still waiting, and from 1 again once none waits', async () => {
    await createFlowsRepository(pool).createFlow({ id: 'burst', name: 'Burst', definition: BENCHMARK_FLOW });
    // A pool of its own, unnamed statements: PGlite serves every connection from one session,
    // and the other tests' pool must not meet statements this one's connections prepared.
    const burstPool = createPool(url, 4);
    const runs = createRunsRepository(burstPool, { preparedStatements: false });
    const create = () => {
      const id = randomUUID();
      const run = {
        id,
        flowId: 'burst',
        flowVersionId: 'burst-v1',
        sync: false,
        trigger: TRIGGER,
        syncInstanceId: null,
      };
      return runs.create(run).then((created) => ({ id, rank: created?.rank ?? 0 }));
    };
    try {
      const first = await create();
      const second = await create();
      expect([first.rank, second.rank]).toEqual([1, 2]);
      // Created at one moment, they may share a rank (FIFO within it), but none is ranked
      // before a run of the flow that was already waiting.
      const burst = await Promise.all(Array.from({ length: 4 }, create));
      for (const run of burst) expect(run.rank).toBeGreaterThanOrEqual(3);
      // The first run starting does not lower the next one's rank below those still waiting.
      expect(await runs.markRunning(first.id, 'worker-1')).toBe('started');
      expect((await create()).rank).toBeGreaterThan(Math.max(...burst.map((r) => r.rank)));
      // Once none of the flow's runs waits, ranks start from 1 again: nothing can be overtaken.
      await burstPool.query(
        `UPDATE runs SET status = 'RUNNING' WHERE flow_id = 'burst' AND status = 'QUEUED'`,
      );
      expect((await create()).rank).toBe(1);
    } finally {
      await burstPool.end();
    }
  });

  it('reports false for a run that does not exist', async () => {
    expect(
      (await createRunsRepository(pool).finish(randomUUID(), { outcome: { status: 'FAILED' } })).finalised,
    ).toBe(false);
  });

  it('creates one run per flow and idempotency key, the key and its run together', async () => {
    const flows = createFlowsRepository(pool);
    for (const id of ['keyed', 'keyed-too'])
      await flows.createFlow({ id, name: id, definition: BENCHMARK_FLOW });
    const runs = createRunsRepository(pool, {
      preparedStatements: false,
      bounds: { maxQueued: 2, maxRunning: 0 },
    });
    const run = (flowId: string) => ({
      id: randomUUID(),
      flowId,
      flowVersionId: `${flowId}-v1`,
      sync: true,
      trigger: TRIGGER,
      syncInstanceId: 'app-1',
    });
    const key = { key: 'k-1', bodySha256: SHA, ttlHours: 1 };
    const first = run('keyed');
    expect(await runs.createWithKey(first, key)).toEqual({ kind: 'created', rank: 1 });
    expect((await runs.get(first.id))?.source).toBe('webhook');
    expect(await runs.createWithKey(run('keyed'), key)).toEqual({
      kind: 'existing',
      key: { runId: first.id, bodySha256: SHA, sync: true, answer: null },
    });
    // Per flow: the same key of another flow is its own.
    expect(await runs.createWithKey(run('keyed-too'), key)).toMatchObject({ kind: 'created' });
    const answer = {
      version: 1 as const,
      type: 'run-ended' as const,
      runId: first.id,
      status: 'FAILED' as const,
    };
    await runs.keepAnswer('keyed', 'k-1', first.id, answer);
    await runs.keepAnswer('keyed', 'k-1', first.id, { ...answer, status: 'TIMEOUT' });
    expect((await runs.idempotencyKey('keyed', 'k-1'))?.answer).toEqual(answer);

    // A full queue writes neither the run nor the key.
    expect(await runs.create(run('keyed'))).toEqual({ rank: 2 });
    expect(await runs.createWithKey(run('keyed'), { ...key, key: 'k-2' })).toEqual({ kind: 'queue-full' });
    expect(await runs.idempotencyKey('keyed', 'k-2')).toBeNull();

    // Expired: taken over by the next run, its answer gone; pruned once expired again.
    await pool.query(`UPDATE runs SET status = 'FAILED', finished_at = now() WHERE flow_id = 'keyed'`);
    await pool.query(
      `UPDATE idempotency_keys SET expires_at = now() - interval '1 second' WHERE flow_id = 'keyed'`,
    );
    expect(await runs.idempotencyKey('keyed', 'k-1')).toBeNull();
    const next = run('keyed');
    expect(await runs.createWithKey(next, key)).toMatchObject({ kind: 'created' });
    expect(await runs.idempotencyKey('keyed', 'k-1')).toEqual({
      runId: next.id,
      bodySha256: SHA,
      sync: true,
      answer: null,
    });
    await pool.query(`UPDATE idempotency_keys SET expires_at = now() - interval '1 second'`);
    expect(await runs.pruneIdempotencyKeys(100)).toBe(2);
  });

  it("creates a failed run's error flow run in its final write, once", async () => {
    const flows = createFlowsRepository(pool);
    const handler = await flows.createFlow({ id: 'on-failure', name: 'h', definition: BENCHMARK_FLOW });
    const failing = await flows.createFlow({
      id: 'fails-over',
      name: 'f',
      definition: { ...BENCHMARK_FLOW, onFailure: 'on-failure' },
    });
    const bundle = { key: 'k', sha256: SHA, sizeBytes: 1, pieces: [] };
    for (const version of [handler, failing]) await flows.publish(String(version?.id), bundle, []);
    const runs = createRunsRepository(pool, { preparedStatements: false });
    const id = randomUUID();
    await runs.create({
      id,
      flowId: 'fails-over',
      flowVersionId: 'fails-over-v1',
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    });
    const error = { name: 'Error', code: 'CODE_STEP_FAILED' as const, message: 'boom', step: 's' };
    const finished = await runs.finish(id, { outcome: { status: 'FAILED', error, steps: [], logKey: null } });
    expect(finished).toMatchObject({
      finalised: true,
      errorFlow: {
        flowId: 'on-failure',
        skipped: null,
        run: { flowId: 'on-failure', flowVersionId: 'on-failure-v1' },
      },
    });
    expect(finished.errorFlow?.run?.trigger.body).toEqual({
      runId: id,
      flowId: 'fails-over',
      flowVersionId: 'fails-over-v1',
      status: 'FAILED',
      error: { code: 'CODE_STEP_FAILED', message: 'boom' },
      failedStep: { name: 's' },
    });
    expect(await runs.get(String(finished.errorFlow?.run?.id))).toMatchObject({
      causedBy: id,
      source: 'error_flow',
    });
    expect(await runs.errorRunOf(id)).toBe(finished.errorFlow?.run?.id);
    // The sweeper's statement, which creates error runs the same way, on this adapter too.
    const abandoned = { name: 'RunSweeper', code: 'RUN_ABANDONED' as const, message: 'gone' };
    expect(await runs.sweepOverdue(3_600, abandoned)).toEqual([]);
    // Final already: nothing more.
    expect(await runs.finish(id, { outcome: { status: 'FAILED', error, steps: [], logKey: null } })).toEqual({
      finalised: false,
      totalMs: null,
    });
  });

  it('links re-runs, deletes old runs leaving tombstones, and refuses runs of a deleted flow', async () => {
    const flows = createFlowsRepository(pool);
    await flows.createFlow({ id: 'kept-runs', name: 'kept-runs', definition: BENCHMARK_FLOW });
    const runs = createRunsRepository(pool);
    const run = {
      flowId: 'kept-runs',
      flowVersionId: 'kept-runs-v1',
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    };
    const [old, rerun] = [randomUUID(), randomUUID()];
    expect(await runs.create({ ...run, id: old })).toEqual({ rank: 1 });
    expect(await runs.create({ ...run, id: rerun, rerunOf: old })).toEqual({ rank: 2 });
    expect(await runs.get(rerun)).toMatchObject({ rerunOf: old, source: 'rerun' });
    expect(await runs.rerunsOf(old)).toEqual([rerun]);
    expect(await runs.rerunSource(old)).toMatchObject({
      kind: 'found',
      flowVersionId: 'kept-runs-v1',
      trigger: TRIGGER,
    });

    await pool.query(
      `UPDATE runs SET status = 'FAILED', finished_at = now(), created_at = now() - interval '10 days' WHERE id = $1`,
      [old],
    );
    expect((await runs.retentionBatch(9, 10)).runs).toEqual([{ id: old, logKey: null, resumes: 0 }]);
    expect(await runs.remove([old])).toBe(1);
    expect(await runs.rerunSource(old)).toEqual({ kind: 'removed' });
    expect(await runs.rerunSource(randomUUID())).toEqual({ kind: 'missing' });
    // The re-run still says what it repeated.
    expect(await runs.get(rerun)).toMatchObject({ rerunOf: old, source: 'rerun' });

    expect(await flows.delete('kept-runs')).toBe(true);
    expect(await flows.delete('kept-runs')).toBe(false);
    expect(await flows.getFlow('kept-runs')).toBeNull();
    await expect(runs.create({ ...run, id: randomUUID() })).rejects.toMatchObject({ code: 'FLOW_NOT_FOUND' });
    expect(await runs.get(rerun)).not.toBeNull();
  });

  it('finds no run for an unknown id', async () => {
    expect(await createRunsRepository(pool).get(randomUUID())).toBeNull();
  });

  it('refuses to read a run whose JSON columns are malformed, naming it, in one run or a page', async () => {
    const runs = createRunsRepository(pool);
    const id = randomUUID();
    await runs.create({
      id,
      flowId: 'bench',
      flowVersionId: 'bench-v2',
      sync: false,
      trigger: TRIGGER,
      syncInstanceId: null,
    });
    await pool.query(`UPDATE runs SET steps = '{"not": "a list"}'::jsonb WHERE id = $1`, [id]);
    await expect(runs.get(id)).rejects.toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(new RegExp(`^run ${id}: its row is malformed: steps`)),
    });
    // A page leaves the steps out, so another column: an error of a code the catalog does not know.
    await pool.query(
      `UPDATE runs SET error = '{"name": "E", "code": "NOPE", "message": "x"}' WHERE id = $1`,
      [id],
    );
    await expect(runs.page({ flowId: 'bench', order: 'newest', limit: 500 })).rejects.toMatchObject({
      message: expect.stringMatching(new RegExp(`^run ${id}: its row is malformed: error\\.code`)),
    });
    await pool.query('DELETE FROM runs WHERE id = $1', [id]);
  });
});
