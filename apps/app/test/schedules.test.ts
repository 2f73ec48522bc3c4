import { createLogger } from '@flowbox/node-kit';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitUntil } from '../../../test/wait.ts';
import { createApp, type FlowboxApp, startApp } from '../src/app.ts';
import { createPool, type Pool } from '../src/db/pool.ts';
import { manage, postJson, testAppConfig } from './app-harness.ts';

const scheduled = (input: Record<string, unknown>, trigger = 'every'): FlowDefinition => ({
  trigger: { name: 'trigger', piece: 'schedule', trigger, input },
  steps: [{ type: 'code', name: 'tick', code: 'return inputs;', input: { at: '{{trigger.scheduledAt}}' } }],
});

interface TickRow {
  scheduled_at: Date;
  outcome: string;
  reason: string | null;
  run_id: string | null;
}

// Two apps on one database, no workers: runs stay QUEUED, which is all a tick has to make.
describe('schedule triggers', () => {
  const apps: FlowboxApp[] = [];
  const urls: string[] = [];
  let url: string;
  let pool: Pool;

  beforeAll(async () => {
    const config = await testAppConfig({ SCHEDULE_MIN_INTERVAL_SECONDS: '1' });
    for (const instance of ['a', 'b']) {
      const app = await createApp(
        { ...config, INSTANCE_ID: `schedules-${instance}` },
        createLogger({ name: 'app', level: 'silent' }),
      );
      apps.push(app);
      const started = await startApp(app, { seedBenchmarkFlow: instance === 'a' });
      urls.push(started);
      url ??= started;
    }
    pool = createPool(config.DATABASE_URL, 2);
  });
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    await pool?.end();
  });

  const ticksOf = async (flowId: string) =>
    (
      await pool.query<TickRow>(
        'SELECT scheduled_at, outcome, reason, run_id FROM schedule_ticks WHERE flow_id = $1 ORDER BY scheduled_at',
        [flowId],
      )
    ).rows;
  const create = (id: string, definition: FlowDefinition) =>
    manage(url, 'POST', '/v1/flows', { id, name: id, definition, publish: true });

  it('refuses bad schedules at create, naming the field', async () => {
    const cases: Array<[FlowDefinition, RegExp]> = [
      [scheduled({ expression: '0 9 * * 1-8' }, 'cron'), /^definition\.trigger\.input\.expression: /],
      [
        scheduled({ expression: '0 9 * * *', timezone: 'Europe/Atlantis' }, 'cron'),
        /^definition\.trigger\.input\.timezone: /,
      ],
      [scheduled({ seconds: 0 }), /^definition\.trigger\.input\.seconds: /],
    ];
    for (const [definition, message] of cases) {
      const answer = await create(`bad-${Math.random().toString(36).slice(2)}`, definition);
      expect(answer.status).toBe(400);
      const body = (await answer.json()) as { error: { code: string; message: string } };
      expect(body.error.code).toBe('INVALID_FLOW');
      expect(body.error.message).toMatch(message);
    }
    expect((await pool.query("SELECT 1 FROM flows WHERE id LIKE 'bad-%'")).rowCount).toBe(0);
  });

  it('starts one run per tick across two apps, and its webhook answers 409', async () => {
    expect((await create('every-second', scheduled({ seconds: 1 }))).status).toBe(201);
    await waitUntil(async () => (await ticksOf('every-second')).length >= 5, 20_000, '5 ticks');
    const ticks = await ticksOf('every-second');
    // The primary key holds this; the test reads it back anyway: consecutive seconds, each once.
    const seconds = ticks.map((t) => t.scheduled_at.getTime() / 1000);
    expect(seconds).toEqual(seconds.map((_, i) => (seconds[0] ?? 0) + i));
    expect(ticks.every((t) => t.outcome === 'fired' && t.run_id !== null)).toBe(true);
    const runs = await pool.query<{ id: string; source: string; scheduled_at: string }>(
      "SELECT id, source, trigger->'body'->>'scheduledAt' AS scheduled_at FROM runs WHERE flow_id = 'every-second'",
    );
    const byId = new Map(runs.rows.map((r) => [r.id, r]));
    for (const tick of ticks) {
      expect(byId.get(tick.run_id ?? '')).toMatchObject({
        source: 'schedule',
        scheduled_at: tick.scheduled_at.toISOString(),
      });
    }
    const run = await manage(url, 'GET', `/v1/runs/${ticks[0]?.run_id}`);
    expect(await run.json()).toMatchObject({ source: 'schedule', status: 'QUEUED' });

    const webhook = await postJson(`${url}/v1/webhooks/every-second`, {});
    expect(webhook.status).toBe(409);
    expect(await webhook.json()).toMatchObject({ error: { code: 'FLOW_NOT_WEBHOOK' } });
    expect(webhook.headers.get('x-flowbox-run-id')).toBeNull();
    expect(
      (await pool.query("SELECT 1 FROM runs WHERE flow_id = 'every-second' AND source <> 'schedule'"))
        .rowCount,
    ).toBe(0);
  });

  it('overlap skip: records ticks skipped while the previous scheduled run is not final', async () => {
    expect((await create('no-overlap', scheduled({ seconds: 1, overlap: 'skip' }))).status).toBe(201);
    await waitUntil(async () => (await ticksOf('no-overlap')).length >= 3, 20_000, '3 ticks');
    const ticks = await ticksOf('no-overlap');
    // No worker: the first run stays QUEUED, so every later tick is skipped.
    expect(ticks[0]).toMatchObject({ outcome: 'fired' });
    // Each tick counted once, by the app that recorded it: the two apps' counters add up.
    let skippedCounted = 0;
    for (const app of apps) {
      const text = await (await fetch(`${urls[apps.indexOf(app)]}/metrics`)).text();
      skippedCounted += Number(
        /^flowbox_schedule_ticks_total\{outcome="skipped"\} (\d+)$/m.exec(text)?.[1] ?? 0,
      );
    }
    expect(skippedCounted).toBeGreaterThanOrEqual(ticks.length - 1);
    for (const tick of ticks.slice(1))
      expect(tick).toMatchObject({ outcome: 'skipped', reason: 'overlap', run_id: null });
    expect((await pool.query("SELECT 1 FROM runs WHERE flow_id = 'no-overlap'")).rowCount).toBe(1);

    // What the inspector shows: the trigger, the next ticks and the latest skipped ones.
    const schedule = (await (await manage(url, 'GET', '/v1/flows/no-overlap/schedule')).json()) as {
      trigger: string;
      overlap: string;
      nextTicks: string[];
      passedTicks: Array<{ scheduledAt: string; outcome: string; reason: string }>;
    };
    expect(schedule).toMatchObject({ trigger: 'every', overlap: 'skip' });
    expect(schedule.nextTicks).toHaveLength(5);
    expect(Date.parse(schedule.nextTicks[1] ?? '') - Date.parse(schedule.nextTicks[0] ?? '')).toBe(1_000);
    expect(schedule.passedTicks[0]).toMatchObject({ outcome: 'skipped', reason: 'overlap' });
    const flow = (await (await manage(url, 'GET', '/v1/flows/no-overlap')).json()) as { trigger: unknown };
    expect(flow.trigger).toEqual({
      piece: 'schedule',
      trigger: 'every',
      input: { seconds: 1, overlap: 'skip' },
    });
    expect((await manage(url, 'GET', '/v1/flows/benchmark/schedule')).status).toBe(404);
  });

  it('disabling, deleting or publishing another schedule stops the old one once the API answered', async () => {
    for (const id of ['to-disable', 'to-delete', 'to-change']) {
      expect((await create(id, scheduled({ seconds: 1 }))).status).toBe(201);
    }
    await waitUntil(
      async () =>
        (await Promise.all(['to-disable', 'to-delete', 'to-change'].map(ticksOf))).every(
          (t) => t.length >= 2,
        ),
      20_000,
      'each ticking',
    );
    const answered = new Map<string, Date>();
    const dbNow = async () =>
      (await pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]?.now;
    expect((await manage(url, 'PATCH', '/v1/flows/to-disable', { enabled: false })).status).toBe(200);
    answered.set('to-disable', (await dbNow()) ?? new Date());
    expect((await manage(url, 'DELETE', '/v1/flows/to-delete')).status).toBe(204);
    answered.set('to-delete', (await dbNow()) ?? new Date());
    const changed = await manage(url, 'POST', '/v1/flows/to-change/versions', {
      definition: scheduled({ expression: '0 0 1 1 *' }, 'cron'),
      publish: true,
    });
    expect(changed.status).toBe(201);
    answered.set('to-change', (await dbNow()) ?? new Date());
    // The clock that decides: ticks of a flow still running, past the last answer.
    const last = answered.get('to-change') ?? new Date();
    await waitUntil(
      async () =>
        (await ticksOf('every-second')).filter((t) => t.scheduled_at.getTime() > last.getTime() + 2_000)
          .length >= 2,
      20_000,
      'two more ticks of another flow',
    );
    for (const [flowId, at] of answered) {
      const late = await pool.query(
        'SELECT id FROM runs WHERE flow_id = $1 AND created_at > $2 UNION ALL SELECT run_id FROM schedule_ticks WHERE flow_id = $1 AND fired_at > $2',
        [flowId, at],
      );
      expect(late.rows, flowId).toEqual([]);
    }
  });
});
