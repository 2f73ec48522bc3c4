// Redis is the transport, not the truth. A Redis killed and started again empty (a
// restart without persistence, a failover that lost the last writes) loses the jobs of runs
// Postgres has accepted; the reconciler enqueues them again from their rows. And a job deleted
// behind a QUEUED run is enqueued again once, however many apps reconcile.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { queryRows } from '../../../../packages/local-services/src/index.ts';
import {
  type FaultStack,
  HOLD_FLOW,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  startLoad,
  tally,
  type WebhookAnswer,
  waitForAllFinal,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';
import { RedisWire } from './redis-wire.ts';

const WEBHOOK_TIMEOUT_SECONDS = 30;
/** Every accepted run is final within this after Redis is back. */
const FINAL_DEADLINE_MS = 60_000;

const recoveries = (fault: FaultStack, runId?: string) =>
  fault.lines.filter(
    (l) =>
      l.name.startsWith('app') &&
      l.line.json?.msg === 'enqueued a QUEUED run again: Redis had lost its job' &&
      (runId === undefined || l.line.json?.runId === runId),
  );

describe.each([
  { persistence: 'none', appendOnly: false },
  { persistence: 'AOF everysec', appendOnly: true },
])('Redis killed and started again ($persistence) under sync load', ({ persistence, appendOnly }) => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      redis: 'private',
      redisAppendOnly: appendOnly,
      workers: 2,
      appEnv: { WEBHOOK_TIMEOUT_SECONDS: String(WEBHOOK_TIMEOUT_SECONDS), RECONCILE_AFTER_SECONDS: '2' },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('runs every accepted run to its end and answers every caller with its run', async () => {
    const redis = fault.redis;
    if (redis === undefined) throw new Error('the stack has no private Redis');
    // Enough callers that some runs wait in the queue when Redis dies (two workers run them).
    const load = startLoad({
      url: fault.url,
      flowId: 'benchmark',
      concurrency: 8,
      sync: true,
      requestTimeoutMs: (WEBHOOK_TIMEOUT_SECONDS + 15) * 1000,
    });
    let killedAt = 0;
    let restartedAt = 0;
    // Webhooks sent while Redis is down (the sync callers may all be waiting on lost runs).
    const probes: WebhookAnswer[] = [];
    try {
      await waitUntil(() => load.result.answers.length >= 30, 60_000, '30 answers before the kill');
      // Not its operator's stop: gone at once, with nothing written anywhere.
      await redis.stop('SIGKILL');
      killedAt = performance.now();
      await waitUntil(
        async () => {
          const probe = await postWebhook(fault.url, 'benchmark', {}, { sync: false, timeoutMs: 5_000 });
          probes.push(probe);
          return probe.status === 503;
        },
        20_000,
        'a 503 while Redis is down',
      );
      await waitUntil(
        () => fault.lines.some((l) => l.name.startsWith('app') && /redis is unavailable/.test(l.line.raw)),
        20_000,
        'the app logged the outage',
      );
      await redis.start();
      restartedAt = performance.now();
      const answeredBefore = load.result.answers.length;
      await waitUntil(
        () => load.result.answers.slice(answeredBefore).filter((a) => a.status === 200).length >= 20,
        FINAL_DEADLINE_MS,
        '20 sync answers after the restart',
      );
    } finally {
      await load.stop();
    }
    const { answers, failures } = load.result;
    // No caller left without an answer, and none waited out its timeout.
    expect(failures).toEqual([]);
    for (const answer of answers) expect([200, 503]).toContain(answer.status);

    // Every run a caller was answered 200 for succeeded; every 503 ended INTERNAL_ERROR and did
    // not run later for nobody.
    const succeeded = answers.filter((a) => a.status === 200).map((a) => a.runId ?? '');
    const runs = await waitForAllFinal(fault, succeeded, FINAL_DEADLINE_MS);
    expect(tally(runs.values())).toEqual({ SUCCEEDED: succeeded.length });
    // A probe accepted before the app noticed Redis was gone is a run like the others.
    for (const probe of probes) expect([202, 503]).toContain(probe.status);
    const acceptedProbes = probes.filter((p) => p.status === 202).map((p) => p.runId ?? '');
    expect(tally((await waitForAllFinal(fault, acceptedProbes, FINAL_DEADLINE_MS)).values())).toEqual(
      acceptedProbes.length === 0 ? {} : { SUCCEEDED: acceptedProbes.length },
    );
    const refused = [...answers, ...probes].filter((a) => a.status === 503);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ error: { code: 'QUEUE_UNAVAILABLE' } });
      expect(await waitForFinal(fault, answer.runId ?? '')).toMatchObject({
        status: 'INTERNAL_ERROR',
        error: { code: 'QUEUE_UNAVAILABLE' },
      });
    }
    // Nothing left QUEUED or RUNNING: the runs whose jobs Redis lost (without persistence, every
    // run waiting in the queue when Redis died) were enqueued again and ran. How many were waiting
    // at the kill is the machine's timing, so the rows say it, not a count of recoveries.
    const open = async () =>
      queryRows<{ id: string; status: string }>(
        fault.databaseUrl,
        "SELECT id, status FROM runs WHERE flow_id = 'benchmark' AND status IN ('QUEUED', 'RUNNING')",
      );
    await waitUntil(
      async () => (await open()).length === 0,
      FINAL_DEADLINE_MS,
      'no run left QUEUED or RUNNING',
    );
    const recovered = recoveries(fault).map((l) => String(l.line.json?.runId));
    for (const runId of recovered) expect((await waitForFinal(fault, runId)).status).toBe('SUCCEEDED');
    // The outage was told once each way.
    const appLines = fault.lines.filter((l) => l.name.startsWith('app'));
    expect(appLines.filter((l) => /redis is unavailable/.test(l.line.raw))).toHaveLength(1);
    expect(appLines.filter((l) => /redis is available again/.test(l.line.raw))).toHaveLength(1);
    report(`Redis killed, restarted with persistence ${persistence}`, {
      downForS: seconds(restartedAt - killedAt),
      answered200: succeeded.length,
      refused503: refused.length,
      reEnqueued: recovered.length,
      slowest200S: seconds(Math.max(...answers.filter((a) => a.status === 200).map((a) => a.ms))),
    });
  }, 180_000);
});

describe('a job deleted from Redis behind a QUEUED run, with two apps', () => {
  let fault: FaultStack;
  const prefix = `faults-${randomUUID().slice(0, 8)}`;

  beforeAll(async () => {
    fault = await startFaultStack({
      apps: 2,
      workers: 1,
      flows: { hold: HOLD_FLOW },
      appEnv: { REDIS_PREFIX: prefix, RECONCILE_AFTER_SECONDS: '2' },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('is enqueued again once, and the run succeeds', async () => {
    const [first, second] = fault.stack.appUrls as [string, string];
    // The one worker is held, so the next run waits in the queue.
    const holdTag = randomUUID();
    const holding = postWebhook(first, 'hold', { url: fault.beacon.urlFor(holdTag), holdMs: 8_000 });
    holding.catch(() => {});
    await fault.beacon.reached(holdTag);
    const queuedTag = randomUUID();
    const queued: WebhookAnswer = await postWebhook(
      second,
      'hold',
      { url: fault.beacon.urlFor(queuedTag), holdMs: 0 },
      { sync: false },
    );
    expect(queued.status).toBe(202);
    const runId = queued.runId ?? '';

    // What Redis loses: the job and its place in the queue. A run ranked first in its flow
    // waits in BullMQ's wait list, a later one in the prioritized set (run-queue.ts); this one
    // is first, since its flow's only other run is running.
    const wire = await RedisWire.open(inject('redisUrl'));
    try {
      // The 202 may come before the job's add has reached Redis: wait until it is in the list.
      for (let tries = 0; tries < 200; tries += 1) {
        if ((await wire.command('LPOS', `${prefix}:runs:wait`, runId)) !== null) break;
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(await wire.command('LREM', `${prefix}:runs:wait`, '0', runId)).toBe(1);
      expect(await wire.command('ZREM', `${prefix}:runs:prioritized`, runId)).toBe(0);
      expect(await wire.command('DEL', `${prefix}:runs:${runId}`)).toBe(1);
    } finally {
      await wire.close();
    }
    expect((await fault.getRun(runId)).status).toBe('QUEUED');

    // Enqueued again by one of the two apps, run by the worker once it is free.
    expect((await waitForFinal(fault, runId, FINAL_DEADLINE_MS)).status).toBe('SUCCEEDED');
    expect((await holding).status).toBe(200);
    const lines = recoveries(fault, runId);
    expect(lines).toHaveLength(1);
    await fault.beacon.reached(queuedTag);
    report('job deleted behind a QUEUED run', { reEnqueuedBy: lines[0]?.name, times: lines.length });
  }, 120_000);
});
