import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import type { Cluster } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RedisCluster, startRedisCluster } from '../../../packages/local-services/src/index.ts';
import { testNamespace } from '../../../test/fixtures.ts';
import { JobBroker } from '../src/queue/job-broker.ts';
import type { LeasedJob } from '../src/queue/leased-job.ts';
import { runQueueNames, shardOf } from '../src/queue/queue-shards.ts';
import { RunQueue } from '../src/queue/run-queue.ts';
import { createRedisClient, isCluster, type RedisClient } from '../src/redis/redis-clients.ts';
import { SyncResponseHub } from '../src/sync/sync-response-hub.ts';
import { runJobData } from './run-fixtures.ts';

const logger = createLogger({ name: 'test', level: 'silent' });
const SHARDS = 4;
const names = runQueueNames(SHARDS, true);

const job = runJobData;

/** A flow id of each shard (the first `flow-<n>` that hashes there). */
const flowOfShard = Array.from({ length: SHARDS }, (_, shard) => {
  for (let n = 0; ; n += 1) if (shardOf(`flow-${n}`, SHARDS) === shard) return `flow-${n}`;
});

// The run queue in QUEUE_SHARDS=4 shards and the sync channels on a real three-primary Redis
// Cluster.
let cluster: RedisCluster;

beforeAll(async () => {
  cluster = await startRedisCluster();
}, 60_000);

afterAll(async () => {
  await cluster?.close();
});

describe('the run queue sharded over a Redis Cluster', () => {
  let producer: Cluster;
  let brokerRedis: Cluster;
  let queue: RunQueue;
  let broker: JobBroker;
  const prefix = testNamespace();
  const signal = new AbortController().signal;

  beforeAll(async () => {
    const producerClient = createRedisClient(cluster.url, { maxRetriesPerRequest: 1 });
    const brokerClient = createRedisClient(cluster.url, { maxRetriesPerRequest: null });
    if (!isCluster(producerClient) || !isCluster(brokerClient)) throw new Error('not a cluster client');
    producer = producerClient;
    brokerRedis = brokerClient;
    queue = new RunQueue({ connection: producer, prefix, names, maxAttempts: 2, logger });
    broker = new JobBroker({ connection: brokerRedis, prefix, names, logger, blockSeconds: 1 });
    await broker.start();
  }, 60_000);

  afterAll(async () => {
    await broker?.close();
    await queue?.close();
    producer?.disconnect();
    brokerRedis?.disconnect();
  });

  const lease = async (): Promise<LeasedJob> => {
    const leased = await broker.next(5_000, signal, 'worker-1');
    if (leased === null) throw new Error('no job within 5 s');
    return leased;
  };

  it('puts the jobs of flows of different shards in different slots, each shard in one', async () => {
    const jobs = flowOfShard.map((flowId) => job(flowId));
    for (const data of jobs) await queue.add(data, 1);
    const slotOf = async (key: string) => Number(await producer.cluster('KEYSLOT', key));
    const slots = await Promise.all(
      jobs.map(async (data, shard) => {
        const jobKey = `${prefix}:${names[shard]}:${data.runId}`;
        expect(await producer.exists(jobKey)).toBe(1);
        const slot = await slotOf(jobKey);
        // BullMQ's scripts touch the job and the shard's sets together: one slot.
        expect(await slotOf(`${prefix}:${names[shard]}:prioritized`)).toBe(slot);
        return slot;
      }),
    );
    expect(new Set(slots).size).toBe(SHARDS);
    // And the slots are served by more than one primary.
    const ranges = await producer.cluster('SLOTS');
    const owners = slots.map((slot) => {
      const range = ranges.find(([from, to]) => slot >= from && slot <= to);
      return range?.[2]?.[1];
    });
    expect(new Set(owners).size).toBeGreaterThan(1);
    expect(await queue.missing(jobs.map((data) => ({ id: data.runId, flowId: data.flowId })))).toEqual(
      new Set(),
    );
    expect(await queue.counts()).toMatchObject({ waiting: SHARDS, active: 0 });
    expect(await queue.waiting()).toBe(SHARDS);
    for (let i = 0; i < SHARDS; i += 1) await (await lease()).complete();
    expect(await queue.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
  });

  it("takes from the shards in turn: one flow's backlog does not hold back another shard's run", async () => {
    const [storm = '', bench = ''] = flowOfShard;
    for (let rank = 1; rank <= 5; rank += 1) await queue.add(job(storm), rank);
    await queue.add(job(bench), 1);
    const first = await lease();
    const second = await lease();
    expect([first.data.flowId, second.data.flowId].sort()).toEqual([storm, bench].sort());
    await first.complete();
    await second.complete();
    const rest: string[] = [];
    for (let i = 0; i < 4; i += 1) {
      const leased = await lease();
      rest.push(leased.data.flowId);
      await leased.complete();
    }
    expect(rest).toEqual([storm, storm, storm, storm]);
  });

  it('leases the next job from the shards in turn when a finished job asks for it', async () => {
    const [storm = '', , other = ''] = flowOfShard;
    await queue.add(job(storm), 1);
    await queue.add(job(storm), 2);
    await queue.add(job(other), 1);
    const first = await lease();
    const second = await first.complete({ fetchNext: true });
    const third = await second?.complete({ fetchNext: true });
    const flows = [first, second, third].map((leased) => leased?.data.flowId);
    // Never the storm's two runs back to back while the other shard has a run waiting.
    expect(flows.filter((flowId) => flowId === other)).toHaveLength(1);
    expect(flows[1]).not.toBe(flows[0]);
    expect(await third?.complete({ fetchNext: true })).toBeNull();
  });

  it('removes a waiting job from its shard and finds missing jobs in each', async () => {
    const [, , , last = ''] = flowOfShard;
    const waiting = job(last);
    await queue.add(waiting, 1);
    expect(await queue.remove(waiting.runId)).toBe(true);
    expect(await queue.missing([{ id: waiting.runId, flowId: last }])).toEqual(new Set([waiting.runId]));
    expect(await queue.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
  });

  it('hands out a postponed job after its delay while every shard is otherwise empty, attempt unchanged', async () => {
    const [busyFlow = '', freeFlow = ''] = flowOfShard;
    await queue.add(job(busyFlow), 1);
    const busy = await lease();
    await busy.postpone(300);
    await queue.add(job(freeFlow), 1);
    const free = await lease();
    expect(free.data.flowId).toBe(freeFlow);
    await free.complete();
    // Now only the delayed job is left: the shards block until it is due. (Last: the other
    // shards' waits outlive the lease, and would take and put back a job added meanwhile.)
    const again = await lease();
    expect(again).toMatchObject({ jobId: busy.jobId, attempt: 1 });
    await again.complete();
  });
});

describe('sync answers across apps over sharded pub/sub on a Redis Cluster', () => {
  it("delivers another app's answer to the caller's app over that app's sharded channel", async () => {
    const prefix = testNamespace();
    const clients = [
      createRedisClient(cluster.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
      createRedisClient(cluster.url, { maxRetriesPerRequest: null, shardedSubscriber: true }),
      createRedisClient(cluster.url, { maxRetriesPerRequest: 1, enableOfflineQueue: false }),
      createRedisClient(cluster.url, { maxRetriesPerRequest: null, shardedSubscriber: true }),
    ];
    const [publisherA, subscriberA, publisherB, subscriberB] = clients;
    if (!publisherA || !subscriberA || !publisherB || !subscriberB) throw new Error('no clients');
    const hub = (publisher: RedisClient, subscriber: RedisClient, instanceId: string) =>
      new SyncResponseHub({ publisher, subscriber, sharded: true, prefix, instanceId, logger });
    const a = hub(publisherA, subscriberA, 'app-a');
    const b = hub(publisherB, subscriberB, 'app-b');
    try {
      await Promise.all(clients.map((client) => client.connect()));
      await a.start();
      await b.start();
      const runId = randomUUID();
      const waiter = a.register(runId);
      const answer = waiter.wait(10_000);
      await b.publish('app-a', { version: 1, type: 'run-ended', runId, status: 'SUCCEEDED' });
      expect(await answer).toMatchObject({ type: 'run-ended', runId, status: 'SUCCEEDED' });
      // A sharded channel (SSUBSCRIBE), held by the one primary of its slot.
      if (!isCluster(publisherA)) throw new Error('not a cluster client');
      const held = await Promise.all(
        publisherA.nodes('master').map((node) => node.call('PUBSUB', 'SHARDCHANNELS')),
      );
      expect(held.flat().filter((channel) => channel === `${prefix}:sync:app-a`)).toHaveLength(1);
    } finally {
      await a.close();
      await b.close();
      for (const client of clients) client.disconnect();
    }
  });
});
