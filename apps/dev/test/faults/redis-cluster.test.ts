// The run queue sharded over a real Redis Cluster (QUEUE_SHARDS=4, three
// primaries with a replica each). The main path (sync and async webhooks, answers crossing apps
// over sharded pub/sub), fairness between flows of different shards, and a primary killed under
// load: its replica takes over, no accepted run is lost, every caller is answered.
import { randomUUID } from 'node:crypto';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runQueueNames, shardOf } from '../../../app/src/queue/queue-shards.ts';
import { createRedisClient, type RedisClient } from '../../../app/src/redis/redis-clients.ts';
import {
  codeFlow,
  type FaultStack,
  HOLD_FLOW,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  startLoad,
  tally,
  waitForAllFinal,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const SHARDS = 4;
const SHARD_NAMES = runQueueNames(SHARDS, true);

/** The first `<stem>-<n>` whose runs go to `shard`. */
function flowOfShard(stem: string, shard: number): string {
  for (let n = 0; ; n += 1) if (shardOf(`${stem}-${n}`, SHARDS) === shard) return `${stem}-${n}`;
}

/** One flow per shard, each answering with its shard. */
const CALC = Array.from({ length: SHARDS }, (_, shard) => flowOfShard('calc', shard));
const calcFlows = (): Record<string, FlowDefinition> =>
  Object.fromEntries(CALC.map((flowId, shard) => [flowId, codeFlow(`return { shard: ${shard} };`)]));

const clusterEnv = (prefix: string) => ({
  QUEUE_SHARDS: String(SHARDS),
  REDIS_PREFIX: prefix,
  RECONCILE_AFTER_SECONDS: '2',
});

/** The node port serving `key`'s slot. */
async function ownerOf(client: RedisClient, key: string): Promise<number | undefined> {
  const slot = Number(await client.cluster('KEYSLOT', key));
  const ranges = await client.cluster('SLOTS');
  return ranges.find(([from, to]) => slot >= from && slot <= to)?.[2]?.[1];
}

describe('the main path on a Redis Cluster with QUEUE_SHARDS=4', () => {
  let fault: FaultStack;
  let client: RedisClient;
  const prefix = `cluster-${randomUUID().slice(0, 8)}`;
  const [storm = '', calm = ''] = [flowOfShard('storm', 0), flowOfShard('calm', 1)];

  beforeAll(async () => {
    fault = await startFaultStack({
      redis: 'cluster',
      apps: 2,
      workers: 1,
      flows: { ...calcFlows(), [storm]: HOLD_FLOW, [calm]: HOLD_FLOW },
      // Through the queue always: these tests read where each run's job lands (a run handed
      // straight to a waiting worker has none).
      appEnv: { ...clusterEnv(prefix), QUEUE_DIRECT_HANDOFF: 'false' },
    });
    client = createRedisClient(fault.redisCluster?.url ?? '', { maxRetriesPerRequest: 1 });
  }, 120_000);

  afterAll(async () => {
    client?.disconnect();
    await fault?.close();
  });

  it('answers sync webhooks on either app and runs async ones, each flow in its shard, the shards in different slots', async () => {
    for (const url of fault.stack.appUrls) {
      for (const [shard, flowId] of CALC.entries()) {
        const answer = await postWebhook(url, flowId);
        expect(answer.status, `${flowId} on ${url}`).toBe(200);
        expect(answer.body).toEqual({ shard });
      }
    }
    const slots = new Set<number>();
    for (const [shard, flowId] of CALC.entries()) {
      const answer = await postWebhook(fault.url, flowId, {}, { sync: false });
      expect(answer.status).toBe(202);
      expect((await waitForFinal(fault, answer.runId ?? '')).status).toBe('SUCCEEDED');
      // The completed job stays (removeOnComplete keeps the last 1000) in its flow's shard.
      const key = `${prefix}:${SHARD_NAMES[shard]}:${answer.runId}`;
      expect(await client.exists(key), key).toBe(1);
      slots.add(Number(await client.cluster('KEYSLOT', key)));
    }
    expect(slots.size).toBe(SHARDS);
  }, 120_000);

  it("starts a run of another shard's flow before a backlog of one flow", async () => {
    // The one worker is held by a run of `storm` while five more of it and one of `calm` queue.
    const blockerTag = randomUUID();
    const blocker = await postWebhook(
      fault.url,
      storm,
      { url: fault.beacon.urlFor(blockerTag), holdMs: 5_000 },
      { sync: false },
    );
    await fault.beacon.reached(blockerTag);
    const order: string[] = [];
    const queued: Array<Promise<unknown>> = [];
    const enqueue = async (flowId: string) => {
      const tag = randomUUID();
      const answer = await postWebhook(
        fault.url,
        flowId,
        { url: fault.beacon.urlFor(tag), holdMs: 0 },
        { sync: false },
      );
      expect(answer.status).toBe(202);
      queued.push(fault.beacon.reached(tag, 1, 60_000).then(() => order.push(flowId)));
      return answer.runId ?? '';
    };
    const runIds: string[] = [];
    for (let i = 0; i < 5; i += 1) runIds.push(await enqueue(storm));
    runIds.push(await enqueue(calm));
    // Otherwise the order below would say nothing: all of them waited behind the blocker.
    expect((await fault.getRun(blocker.runId ?? '')).status).toBe('RUNNING');
    await Promise.all(queued);
    expect(tally((await waitForAllFinal(fault, runIds, 60_000)).values())).toEqual({ SUCCEEDED: 6 });
    // Shards in turn: `calm` is next after the blocker (one FIFO queue would run it last).
    expect(order.indexOf(calm)).toBe(0);
  }, 120_000);
});

describe('a Redis Cluster primary killed under sync load, its replica promoted', () => {
  let fault: FaultStack;
  let client: RedisClient;
  const prefix = `cluster-${randomUUID().slice(0, 8)}`;
  const WEBHOOK_TIMEOUT_SECONDS = 10;

  beforeAll(async () => {
    fault = await startFaultStack({
      redis: 'cluster',
      apps: 2,
      workers: 2,
      flows: calcFlows(),
      appEnv: { ...clusterEnv(prefix), WEBHOOK_TIMEOUT_SECONDS: String(WEBHOOK_TIMEOUT_SECONDS) },
    });
    client = createRedisClient(fault.redisCluster?.url ?? '', { maxRetriesPerRequest: 1 });
  }, 120_000);

  afterAll(async () => {
    client?.disconnect();
    await fault?.close();
  });

  it('loses no accepted run and answers every caller (200, or 503/504 with its run id)', async () => {
    const cluster = fault.redisCluster;
    if (cluster === undefined) throw new Error('the stack has no Redis Cluster');
    // The primary of shard 0's slot: its jobs, waiting and running, are on the node that dies.
    const victimPort = await ownerOf(client, `${prefix}:${SHARD_NAMES[0]}:wait`);
    const victim = cluster.nodes.find((node) => node.port === victimPort);
    if (victim === undefined) throw new Error('no primary serves shard 0');
    let turn = 0;
    const loads = CALC.map((flowId) =>
      startLoad({
        url: () => fault.stack.appUrls[turn++ % fault.stack.appUrls.length] ?? fault.url,
        flowId,
        concurrency: 2,
        sync: true,
        requestTimeoutMs: (WEBHOOK_TIMEOUT_SECONDS + 15) * 1000,
      }),
    );
    const answered = () => loads.reduce((sum, load) => sum + load.result.answers.length, 0);
    const answered200 = () =>
      loads.reduce((sum, load) => sum + load.result.answers.filter((a) => a.status === 200).length, 0);
    let killedAt = 0;
    let healthyAt = 0;
    try {
      await waitUntil(() => answered() >= 40, 60_000, '40 answers before the kill');
      await victim.stop('SIGKILL');
      killedAt = performance.now();
      await cluster.waitHealthy(60_000);
      healthyAt = performance.now();
      const before = answered200();
      // Every shard's flow is answered again after the failover, on both apps.
      await waitUntil(() => answered200() >= before + 40, 90_000, '40 answers of 200 after the failover');
    } finally {
      await Promise.all(loads.map((load) => load.stop()));
    }
    const answers = loads.flatMap((load) => load.result.answers);
    expect(loads.flatMap((load) => load.result.failures)).toEqual([]);
    for (const answer of answers) {
      expect([200, 503, 504], JSON.stringify(answer.body)).toContain(answer.status);
      expect(answer.runId).toEqual(expect.any(String));
    }
    // No accepted run lost: every run is final, as its answer said. A 200's run succeeded; a
    // 504's went on and succeeded, or, when its job was on the node that died and it had not
    // started within the timeout, ended CALLER_GONE as that 504 said; a 503's never ran
    // (QUEUE_UNAVAILABLE, as with a single Redis).
    const accepted = answers.filter((a) => a.status !== 503);
    const runs = await waitForAllFinal(
      fault,
      accepted.map((a) => a.runId ?? ''),
      90_000,
    );
    const saidGone = (a: (typeof accepted)[number]) =>
      a.status === 504 && JSON.stringify(a.body).includes('will not run (CALLER_GONE)');
    const finalOf = (a: (typeof accepted)[number]) =>
      tally([...runs].flatMap(([runId, run]) => (runId === a.runId ? [run] : [])));
    expect(accepted.map(finalOf)).toEqual(
      accepted.map((a) => (saidGone(a) ? { 'FAILED CALLER_GONE': 1 } : { SUCCEEDED: 1 })),
    );
    const refused = answers.filter((a) => a.status === 503);
    for (const answer of refused) {
      expect(answer.body).toMatchObject({ error: { code: 'QUEUE_UNAVAILABLE' } });
      expect(await waitForFinal(fault, answer.runId ?? '')).toMatchObject({ status: 'INTERNAL_ERROR' });
    }
    report('Redis Cluster primary killed, replica promoted', {
      failoverS: seconds(healthyAt - killedAt),
      answered200: answers.filter((a) => a.status === 200).length,
      refused503: refused.length,
      timedOut504: answers.filter((a) => a.status === 504).length,
      slowest200S: seconds(Math.max(...answers.filter((a) => a.status === 200).map((a) => a.ms))),
    });
  }, 240_000);
});
