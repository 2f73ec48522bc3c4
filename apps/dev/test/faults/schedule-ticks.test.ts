// Fault-injection row "schedule ticks across apps": three apps fire one `every 1 s` schedule.
// Each tick starts exactly one run (the tick's row in Postgres decides, not an app or Redis),
// with an app SIGKILLed and Redis killed and started again empty in the middle; once the flow
// is disabled, no run of it starts. Ticks are counted by their scheduled times, never by sleeps.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../app/src/db/pool.ts';
import { manage } from '../../../app/test/app-harness.ts';
import {
  type FaultStack,
  report,
  startFaultStack,
  tally,
  waitForAllFinal,
  waitUntil,
} from './fault-harness.ts';

const everySecond: FlowDefinition = {
  trigger: { name: 'trigger', piece: 'schedule', trigger: 'every', input: { seconds: 1 } },
  steps: [{ type: 'code', name: 'tick', code: 'return inputs;', input: { at: '{{trigger.scheduledAt}}' } }],
};
/** Ticks to wait for in each phase. */
const TICKS_PER_PHASE = 5;
const TICK_DEADLINE_MS = 30_000;

describe('schedule ticks across three apps', () => {
  let fault: FaultStack;
  let pool: Pool;

  beforeAll(async () => {
    fault = await startFaultStack({
      apps: 3,
      workers: 2,
      redis: 'private',
      redisAppendOnly: false,
      appEnv: { SCHEDULE_MIN_INTERVAL_SECONDS: '1', RECONCILE_AFTER_SECONDS: '2' },
    });
    pool = createPool(fault.databaseUrl, 2);
  });

  afterAll(async () => {
    await pool?.end();
    await fault?.close();
  });

  const ticks = async (flowId: string) =>
    (
      await pool.query<{ at: Date; outcome: string; run_id: string | null }>(
        'SELECT scheduled_at AS at, outcome, run_id FROM schedule_ticks WHERE flow_id = $1 ORDER BY scheduled_at',
        [flowId],
      )
    ).rows;
  /** Waits until the flow has `count` more ticks than it had. */
  const moreTicks = async (flowId: string, count: number, what: string) => {
    const before = (await ticks(flowId)).length;
    await waitUntil(async () => (await ticks(flowId)).length >= before + count, TICK_DEADLINE_MS, what);
  };
  const dbNow = async () =>
    (await pool.query<{ now: Date }>('SELECT clock_timestamp() AS now')).rows[0]?.now ?? new Date(0);

  it('starts one run per tick through an app SIGKILL and an empty Redis, and none once disabled', async () => {
    const redis = fault.redis;
    if (redis === undefined) throw new Error('the stack has no private Redis');
    for (const id of ['ticking', 'control']) {
      const created = await manage(
        fault.url,
        'POST',
        '/v1/flows',
        { id, name: id, definition: everySecond, publish: true },
        fault.stack.apiKey,
      );
      expect(created.status).toBe(201);
    }
    const since = (
      await pool.query<{ since: Date }>("SELECT schedule_since AS since FROM flows WHERE id = 'ticking'")
    ).rows[0]?.since;
    if (since === undefined) throw new Error('no flow');
    await moreTicks('ticking', TICKS_PER_PHASE, 'ticks with three apps');

    // An app dies at once: the two left fire every tick, no failover needed.
    const victim = fault.stack.apps[2];
    if (victim === undefined) throw new Error('no third app');
    process.kill(victim.pid, 'SIGKILL');
    await victim.exited;
    await moreTicks('ticking', TICKS_PER_PHASE, 'ticks after the SIGKILL');

    // Redis dies and comes back empty: ticks go on (their truth is Postgres); the runs whose
    // jobs it lost are enqueued again by the reconciler.
    await redis.stop('SIGKILL');
    await moreTicks('ticking', 3, 'ticks while Redis is down');
    await redis.start();
    await moreTicks('ticking', TICKS_PER_PHASE, 'ticks after Redis came back');

    const disabled = await manage(
      fault.url,
      'PATCH',
      '/v1/flows/ticking',
      { enabled: false },
      fault.stack.apiKey,
    );
    expect(disabled.status).toBe(200);
    const answeredAt = await dbNow();
    // The clock that decides: the control flow ticks on past the answer.
    await waitUntil(
      async () =>
        (await ticks('control')).filter((t) => t.at.getTime() >= answeredAt.getTime() + 3_000).length > 0,
      TICK_DEADLINE_MS,
      'control ticks 3 s past the answer',
    );

    const recorded = await ticks('ticking');
    const seconds = recorded.map((t) => t.at.getTime() / 1000);
    // Every second from the schedule's start to the answer, each once: none lost, none twice;
    // at the edges, the tick of the second the flow was disabled in may or may not have fired.
    const first = Math.floor(since.getTime() / 1000) + 1;
    const last = Math.floor(answeredAt.getTime() / 1000);
    expect(seconds[0]).toBe(first);
    expect(seconds).toEqual(seconds.map((_, i) => first + i));
    expect(last - (seconds.at(-1) ?? 0)).toBeGreaterThanOrEqual(0);
    expect(last - (seconds.at(-1) ?? 0)).toBeLessThanOrEqual(1);
    expect(recorded.every((t) => t.outcome === 'fired' && t.run_id !== null)).toBe(true);

    // One run per tick, and each run is its tick's.
    const runs = await pool.query<{ id: string; at: string; created_at: Date; source: string }>(
      "SELECT id, trigger->'body'->>'scheduledAt' AS at, created_at, source FROM runs WHERE flow_id = 'ticking'",
    );
    expect(runs.rows).toHaveLength(recorded.length);
    expect(new Set(runs.rows.map((r) => r.at)).size).toBe(runs.rows.length);
    expect(new Set(runs.rows.map((r) => r.id))).toEqual(new Set(recorded.map((t) => t.run_id)));
    expect(runs.rows.every((r) => r.source === 'schedule')).toBe(true);
    // None after the answer.
    expect(runs.rows.filter((r) => r.created_at > answeredAt)).toEqual([]);

    // Every run ran to its end, those whose jobs the empty Redis lost too.
    const final = await waitForAllFinal(
      fault,
      runs.rows.map((r) => r.id),
      90_000,
    );
    expect(tally(final.values())).toEqual({ SUCCEEDED: runs.rows.length });
    const requeued = fault.lines.filter(
      (l) =>
        l.name.startsWith('app') &&
        l.line.json?.msg === 'enqueued a QUEUED run again: Redis had lost its job',
    ).length;
    report('schedule ticks across three apps', {
      ticks: recorded.length,
      runs: runs.rows.length,
      reEnqueuedAfterRedis: requeued,
    });
  }, 240_000);
});
