// Polling triggers on a real stack: the `http` piece's `new_items` polls a local JSON server
// (127.0.0.1, allowed by the workers' EGRESS) from an engine on a worker. The first poll records a
// baseline and starts nothing; each item added later starts one run, never two; a failing
// source is retried each interval, shown, and advances nothing; a disabled flow polls no more.
// Every wait is on a count (runs, polls), never on a clock.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { promSample } from '../../../test/prometheus.ts';
import { createPool, type Pool } from '../../app/src/db/pool.ts';
import { manage } from '../../app/test/app-harness.ts';
import { type FaultStack, startFaultStack, waitForAllFinal, waitUntil } from './faults/fault-harness.ts';
import { type ItemsServer, startItemsServer } from './faults/items-server.ts';

const DEADLINE_MS = 30_000;
/** POLL_MAX_ITEMS: the most runs one poll starts. */
const MAX_ITEMS = 5;

export function newItemsFlow(url: string, input: Record<string, unknown> = {}): FlowDefinition {
  return {
    trigger: {
      name: 'trigger',
      piece: 'http',
      trigger: 'new_items',
      input: { url, path: 'items', keyField: 'id', intervalSeconds: 1, ...input },
    },
    steps: [{ type: 'code', name: 'seen', code: 'return inputs;', input: { id: '{{trigger.id}}' } }],
  };
}

interface PollView {
  baselineAt: string | null;
  polls: number;
  itemsFound: number;
  failures: number;
  lastError: { code: string; message: string } | null;
}

describe('polling triggers', { timeout: 90_000 }, () => {
  let fault: FaultStack;
  let pool: Pool;
  let source: ItemsServer;
  /** A source holding more new items than one poll may start. */
  let large: ItemsServer;

  beforeAll(async () => {
    source = await startItemsServer();
    source.add(3);
    large = await startItemsServer();
    large.add(12);
    fault = await startFaultStack({
      workers: 2,
      appEnv: { POLL_MIN_INTERVAL_SECONDS: '1', POLL_MAX_ITEMS: String(MAX_ITEMS) },
      workerEnv: {
        EGRESS: `public,127.0.0.1:${new URL(source.url).port},127.0.0.1:${new URL(large.url).port}`,
      },
    });
    pool = createPool(fault.databaseUrl, 2);
  });
  afterAll(async () => {
    await pool?.end();
    await fault?.close();
    await source?.close();
    await large?.close();
  });

  const create = (id: string, definition: FlowDefinition) =>
    manage(fault.url, 'POST', '/v1/flows', { id, name: id, definition, publish: true }, fault.stack.apiKey);
  const pollOf = async (flowId: string): Promise<PollView | null> => {
    const answer = await manage(fault.url, 'GET', `/v1/flows/${flowId}/poll`, undefined, fault.stack.apiKey);
    return answer.status === 200 ? ((await answer.json()) as PollView) : null;
  };
  /** Waits until the flow has `count` more polls (ended, failed ones included) than now. */
  const morePolls = async (flowId: string, count: number) => {
    const before = (await pollOf(flowId))?.polls ?? 0;
    await waitUntil(
      async () => ((await pollOf(flowId))?.polls ?? 0) >= before + count,
      DEADLINE_MS,
      `${count} polls of ${flowId}`,
    );
  };
  const runsOf = async (flowId: string) =>
    (
      await pool.query<{ id: string; item: string; source: string }>(
        "SELECT id, trigger->'body'->>'id' AS item, source FROM runs WHERE flow_id = $1 ORDER BY created_at, rank",
        [flowId],
      )
    ).rows;

  it('refuses a polling trigger under the interval floor, naming the field', async () => {
    const answer = await create('too-fast', newItemsFlow(source.url, { intervalSeconds: 0 }));
    expect(answer.status).toBe(400);
    const body = (await answer.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('INVALID_FLOW');
    expect(body.error.message).toMatch(/^definition\.trigger\.input\.intervalSeconds: /);
  });

  it('records a baseline, then starts one run per new item and none twice', async () => {
    expect((await create('new-items', newItemsFlow(source.url))).status).toBe(201);
    await waitUntil(async () => (await pollOf('new-items'))?.baselineAt != null, DEADLINE_MS, 'the baseline');
    expect((await pollOf('new-items'))?.itemsFound).toBe(3);
    await morePolls('new-items', 2);
    expect(await runsOf('new-items')).toEqual([]);

    source.add(2);
    await waitUntil(async () => (await runsOf('new-items')).length >= 2, DEADLINE_MS, 'two runs');
    await morePolls('new-items', 3);
    const runs = await runsOf('new-items');
    expect(runs.map((r) => r.item)).toEqual(['item-4', 'item-5']);
    expect(runs.every((r) => r.source === 'poll')).toBe(true);
    // Its webhook starts nothing: the flow starts from its polls.
    const webhook = await fetch(`${fault.url}/v1/webhooks/new-items`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: '{"id":"item-99"}',
    });
    expect(webhook.status).toBe(409);
    expect(((await webhook.json()) as { error: { code: string } }).error.code).toBe('FLOW_NOT_WEBHOOK');
    expect((await runsOf('new-items')).length).toBe(2);
    const final = await waitForAllFinal(
      fault,
      runs.map((r) => r.id),
      DEADLINE_MS,
    );
    expect([...final.values()].map((run) => run.status)).toEqual(['SUCCEEDED', 'SUCCEEDED']);
  });

  it("starts a run for every item on the first poll with startFrom 'all'", async () => {
    expect((await create('from-all', newItemsFlow(source.url, { startFrom: 'all' }))).status).toBe(201);
    await waitUntil(
      async () => (await runsOf('from-all')).length >= source.count,
      DEADLINE_MS,
      'a run per item',
    );
    await morePolls('from-all', 2);
    expect((await runsOf('from-all')).map((r) => r.item)).toEqual(
      Array.from({ length: source.count }, (_, i) => `item-${i + 1}`),
    );
  });

  it('starts at most POLL_MAX_ITEMS runs a poll, the rest on the next polls, in order', async () => {
    // Each GET is held until the test has read what the poll before it recorded: a poll is taken
    // only once the one before it has ended (its lease), so each count below is exact.
    let held = large.holdNext();
    expect((await create('bounded', newItemsFlow(large.url, { startFrom: 'all' }))).status).toBe(201);
    for (const expected of [0, 5, 10, 12]) {
      const get = await held;
      expect((await runsOf('bounded')).length).toBe(expected);
      held = large.holdNext();
      get.release();
    }
    (await held).release();
    await morePolls('bounded', 2);
    expect((await runsOf('bounded')).map((r) => r.item)).toEqual(
      Array.from({ length: 12 }, (_, i) => `item-${i + 1}`),
    );
  });

  it('retries a failing poll each interval, shows it, and advances nothing meanwhile', async () => {
    const before = (await runsOf('new-items')).length;
    source.setStatus(503);
    source.add(1);
    await waitUntil(
      async () => ((await pollOf('new-items'))?.failures ?? 0) >= 2,
      DEADLINE_MS,
      'two failed polls',
    );
    const failing = await pollOf('new-items');
    expect(failing?.lastError?.code).toBe('POLL_FAILED');
    expect(failing?.lastError?.message).toContain('503');
    expect((await runsOf('new-items')).length).toBe(before);
    const metrics = await (await fetch(`${fault.url}/metrics`)).text();
    expect(promSample(metrics, 'flowbox_polls_total{outcome="failed"}')).toBeGreaterThanOrEqual(2);

    source.setStatus(200);
    await waitUntil(
      async () => (await runsOf('new-items')).length > before,
      DEADLINE_MS,
      'the run after recovery',
    );
    await morePolls('new-items', 2);
    expect((await runsOf('new-items')).map((r) => r.item).slice(before)).toEqual(['item-6']);
    expect((await pollOf('new-items'))?.failures).toBe(0);
  });

  it('polls a disabled flow no more: its items start nothing', async () => {
    const disabled = await manage(
      fault.url,
      'PATCH',
      '/v1/flows/new-items',
      { enabled: false },
      fault.stack.apiKey,
    );
    expect(disabled.status).toBe(200);
    const polls = (await pollOf('new-items'))?.polls;
    const runs = (await runsOf('new-items')).length;
    source.add(1);
    // The other flow on the same source polls on: three of its polls pass after the answer.
    await morePolls('from-all', 3);
    expect((await pollOf('new-items'))?.polls).toBe(polls);
    expect((await runsOf('new-items')).length).toBe(runs);
  });
});

/** FLOW_TIMEOUT_SECONDS of the SANDBOXED stack: what a poll that hangs is given. */
const TIMEOUT_SECONDS = 3;

// The poll's engine in bubblewrap: its only way out is the worker's relay, under EGRESS.
describe('polling triggers in SANDBOXED mode', { timeout: 90_000 }, () => {
  let fault: FaultStack;
  let pool: Pool;
  let source: ItemsServer;
  /** A source EGRESS does not name. */
  let denied: ItemsServer;
  /** A source whose first answer never comes. */
  let hanging: ItemsServer;

  beforeAll(async () => {
    source = await startItemsServer();
    denied = await startItemsServer();
    hanging = await startItemsServer();
    fault = await startFaultStack({
      appEnv: { POLL_MIN_INTERVAL_SECONDS: '1', FLOW_TIMEOUT_SECONDS: String(TIMEOUT_SECONDS) },
      workerEnv: {
        EXECUTION_MODE: 'SANDBOXED',
        EGRESS: `public,127.0.0.1:${new URL(source.url).port},127.0.0.1:${new URL(hanging.url).port}`,
      },
    });
    pool = createPool(fault.databaseUrl, 2);
  });
  afterAll(async () => {
    await pool?.end();
    await fault?.close();
    await source?.close();
    await denied?.close();
    await hanging?.close();
  });

  const create = (id: string, definition: FlowDefinition) =>
    manage(fault.url, 'POST', '/v1/flows', { id, name: id, definition, publish: true }, fault.stack.apiKey);
  const pollOf = async (flowId: string): Promise<PollView | null> => {
    const answer = await manage(fault.url, 'GET', `/v1/flows/${flowId}/poll`, undefined, fault.stack.apiKey);
    return answer.status === 200 ? ((await answer.json()) as PollView) : null;
  };
  const runCount = async (flowId: string) =>
    (await pool.query('SELECT 1 FROM runs WHERE flow_id = $1', [flowId])).rowCount ?? 0;

  it('polls through the relay, and a source EGRESS does not allow fails the poll EGRESS_DENIED', async () => {
    expect((await create('sandboxed', newItemsFlow(source.url))).status).toBe(201);
    expect((await create('denied', newItemsFlow(denied.url))).status).toBe(201);
    await waitUntil(async () => (await pollOf('sandboxed'))?.baselineAt != null, DEADLINE_MS, 'the baseline');
    source.add(2);
    await waitUntil(async () => (await runCount('sandboxed')) === 2, DEADLINE_MS, 'two runs');

    await waitUntil(
      async () => ((await pollOf('denied'))?.failures ?? 0) >= 1,
      DEADLINE_MS,
      'a refused poll',
    );
    expect((await pollOf('denied'))?.lastError?.code).toBe('EGRESS_DENIED');
    expect((await pollOf('denied'))?.baselineAt).toBeNull();
    expect(denied.gets).toBe(0);
    expect(await runCount('denied')).toBe(0);
  });

  it('ends a poll that hangs at the flow timeout, and polls again', async () => {
    const held = hanging.holdNext();
    expect((await create('hanging', newItemsFlow(hanging.url))).status).toBe(201);
    const get = await held;
    await waitUntil(
      async () => ((await pollOf('hanging'))?.failures ?? 0) >= 1,
      DEADLINE_MS,
      'the poll timed out',
    );
    const timedOut = await pollOf('hanging');
    expect(timedOut?.lastError?.code).toBe('FLOW_TIMEOUT');
    expect(timedOut?.baselineAt).toBeNull();
    get.release();
    await waitUntil(
      async () => (await pollOf('hanging'))?.baselineAt != null,
      DEADLINE_MS,
      'the baseline after',
    );
  });
});
