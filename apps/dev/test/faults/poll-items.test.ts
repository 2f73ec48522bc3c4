// Fault-injection row "poll items through a worker SIGKILL": a local source gains 1,000 items
// while a polling flow polls it every second (each GET adds the next 100) from two apps with a
// worker each, and the worker whose
// engine is answering one of those GETs is SIGKILLed while the source holds that answer. Exactly
// 1,000 runs start, one per item, none twice: the item keys' primary key and the state written in
// the transaction that creates the runs decide, and a poll whose worker died records nothing.
// Every wait is on a count (items, runs, polls), never on a clock.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPool, type Pool } from '../../../app/src/db/pool.ts';
import { manage } from '../../../app/test/app-harness.ts';
import {
  type FaultStack,
  isRunning,
  ownerOfLocalPort,
  parentOf,
  report,
  startFaultStack,
  waitUntil,
} from './fault-harness.ts';
import { type ItemsServer, startItemsServer } from './items-server.ts';

const ITEMS = 1_000;
const PER_POLL = 100;

describe('poll items through a worker SIGKILL', { timeout: 240_000 }, () => {
  let fault: FaultStack;
  let pool: Pool;
  let source: ItemsServer;

  beforeAll(async () => {
    source = await startItemsServer({ total: ITEMS });
    // Two apps, a worker each: both take ticks, and the item keys decide across them.
    fault = await startFaultStack({
      apps: 2,
      workers: 2,
      appEnv: { POLL_MIN_INTERVAL_SECONDS: '1' },
      workerEnv: { EGRESS: `public,127.0.0.1:${new URL(source.url).port}` },
    });
    pool = createPool(fault.databaseUrl, 2);
  });
  afterAll(async () => {
    await pool?.end();
    await fault?.close();
    await source?.close();
  });

  const polls = async () =>
    (
      await pool.query<{ polls: string; baselined: boolean }>(
        "SELECT polls, baseline_at IS NOT NULL AS baselined FROM trigger_polls WHERE flow_id = 'polled'",
      )
    ).rows[0];
  const runCount = async () =>
    (await pool.query<{ n: number }>("SELECT count(*)::int AS n FROM runs WHERE flow_id = 'polled'")).rows[0]
      ?.n ?? 0;

  it('starts exactly one run per item', async () => {
    const definition: FlowDefinition = {
      trigger: {
        name: 'trigger',
        piece: 'http',
        trigger: 'new_items',
        input: { url: source.url, path: 'items', keyField: 'id', intervalSeconds: 1 },
      },
      steps: [{ type: 'code', name: 'seen', code: 'return inputs;', input: { id: '{{trigger.id}}' } }],
    };
    const created = await manage(
      fault.url,
      'POST',
      '/v1/flows',
      { id: 'polled', name: 'polled', definition, publish: true },
      fault.stack.apiKey,
    );
    expect(created.status).toBe(201);
    // The baseline of an empty source; from then on each GET adds the next items.
    await waitUntil(async () => (await polls())?.baselined === true, 30_000, 'the baseline');
    source.setPerGet(PER_POLL);
    await waitUntil(() => source.count >= ITEMS / 2, 60_000, 'half the items added');

    // The next GET is held until its worker is dead: its engine is the one holding the socket.
    const held = await source.holdNext();
    const owner = ownerOfLocalPort(held.remotePort);
    if (owner === null) throw new Error('no process holds the poll connection');
    const workerPids = new Set(fault.stack.workers.map((worker) => worker.pid));
    let victim: number | null = owner;
    while (victim !== null && !workerPids.has(victim)) victim = parentOf(victim);
    if (victim === null) throw new Error(`the poll's process ${owner} is under no worker`);
    const killed = victim;
    process.kill(killed, 'SIGKILL');
    await waitUntil(() => !isRunning(killed), 10_000, 'the worker gone');
    held.release();

    await waitUntil(() => source.count >= ITEMS, 90_000, 'every item added');
    await waitUntil(async () => (await runCount()) >= ITEMS, 90_000, 'a run per item');
    // Three more polls see all 1,000 again: none starts a run.
    const after = Number((await polls())?.polls ?? 0);
    await waitUntil(async () => Number((await polls())?.polls ?? 0) >= after + 3, 30_000, 'three more polls');

    const runs = await pool.query<{ item: string; source: string }>(
      "SELECT trigger->'body'->>'id' AS item, source FROM runs WHERE flow_id = 'polled'",
    );
    expect(runs.rows).toHaveLength(ITEMS);
    expect(new Set(runs.rows.map((r) => r.item)).size).toBe(ITEMS);
    expect(runs.rows.every((r) => r.source === 'poll')).toBe(true);
    const keys = await pool.query<{ with_run: number; baseline: number }>(
      `SELECT count(run_id)::int AS with_run, count(*) FILTER (WHERE run_id IS NULL)::int AS baseline
       FROM poll_items p JOIN flow_versions v ON v.id = p.flow_version_id WHERE v.flow_id = 'polled'`,
    );
    expect(keys.rows[0]).toEqual({ with_run: ITEMS, baseline: 0 });

    // Every run ends, and none of them was the dead worker's: it held the poll, not a run.
    await waitUntil(
      async () =>
        (
          await pool.query(
            "SELECT 1 FROM runs WHERE flow_id = 'polled' AND status IN ('QUEUED', 'RUNNING') LIMIT 1",
          )
        ).rowCount === 0,
      120_000,
      'every run final',
    );
    const statuses = await pool.query<{ status: string; n: number }>(
      "SELECT status, count(*)::int AS n FROM runs WHERE flow_id = 'polled' GROUP BY status",
    );
    expect(statuses.rows).toEqual([{ status: 'SUCCEEDED', n: ITEMS }]);
    // The poll that died with its worker was recorded as failed, and changed nothing else.
    const lost = await pool.query<{ polls: string; last_error: { code: string } | null }>(
      "SELECT polls, last_error FROM trigger_polls WHERE flow_id = 'polled'",
    );
    expect(lost.rows[0]?.last_error?.code).toBe('WORKER_LOST');
    report('poll items through a worker SIGKILL', {
      items: ITEMS,
      runs: runs.rows.length,
      polls: Number(lost.rows[0]?.polls ?? 0),
      gets: source.gets,
    });
  });
});
