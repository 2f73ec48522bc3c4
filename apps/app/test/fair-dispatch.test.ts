import { createLogger } from '@flowbox/node-kit';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testNamespace } from '../../../test/fixtures.ts';
import { directLease } from '../src/queue/direct-lease.ts';
import { JobBroker } from '../src/queue/job-broker.ts';
import type { LeasedJob } from '../src/queue/leased-job.ts';
import { RunQueue } from '../src/queue/run-queue.ts';
import { runJobData } from './run-fixtures.ts';

const logger = createLogger({ name: 'test', level: 'silent' });

const job = runJobData;

// The queue and the broker on real Redis: jobs leave by their run's rank within its flow, so a
// flow's backlog does not hold back another flow's run (issue 26, item 3).
describe('fair dispatch', () => {
  let producer: Redis;
  let brokerRedis: Redis;
  let queue: RunQueue;
  let broker: JobBroker;
  const signal = new AbortController().signal;

  const prefix = testNamespace();

  beforeAll(async () => {
    producer = new Redis(inject('redisUrl'));
    brokerRedis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    queue = new RunQueue({ connection: producer, prefix, maxAttempts: 2 });
    broker = new JobBroker({ connection: brokerRedis, prefix, logger, blockSeconds: 1 });
    await broker.start();
  });

  afterAll(async () => {
    await broker.close();
    await queue.close();
    producer.disconnect();
    brokerRedis.disconnect();
  });

  const lease = async (): Promise<LeasedJob> => {
    const leased = await broker.next(5_000, signal);
    if (leased === null) throw new Error('no job within 5 s');
    return leased;
  };

  it("serves every flow's first waiting run before any flow's second: round-robin over flows", async () => {
    // A backlog of four runs of `storm`, then one run each of two other flows.
    for (let rank = 1; rank <= 4; rank += 1) await queue.add(job('storm'), rank);
    await queue.add(job('bench'), 1);
    await queue.add(job('other'), 1);
    const order: string[] = [];
    for (let i = 0; i < 6; i += 1) {
      const leased = await lease();
      order.push(leased.data.flowId);
      await leased.complete();
    }
    expect(order).toEqual(['storm', 'bench', 'other', 'storm', 'storm', 'storm']);
  });

  it("adds a flow's first waiting run without a priority, and only later ones with their rank", async () => {
    await queue.add(job('first'), 1);
    await queue.add(job('backlog'), 2);
    expect(await producer.llen(`${prefix}:runs:wait`)).toBe(1);
    expect(await producer.zcard(`${prefix}:runs:prioritized`)).toBe(1);
    const order: string[] = [];
    for (let i = 0; i < 2; i += 1) {
      const leased = await lease();
      order.push(leased.data.flowId);
      await leased.complete();
    }
    expect(order).toEqual(['first', 'backlog']);
  });

  it('keeps the order when a finished job leases the next in the same call', async () => {
    await queue.add(job('storm'), 1);
    await queue.add(job('storm'), 2);
    await queue.add(job('bench'), 1);
    const first = await lease();
    const second = await first.complete({ fetchNext: true });
    const third = await second?.complete({ fetchNext: true });
    expect([first, second, third].map((leased) => leased?.data.flowId)).toEqual(['storm', 'bench', 'storm']);
    await third?.complete();
  });

  it('hands out another job while one is postponed, and the postponed one after its delay, attempt unchanged', async () => {
    await queue.add(job('busy'), 1);
    await queue.add(job('free'), 2);
    const busy = await lease();
    expect(busy.data.flowId).toBe('busy');
    await busy.postpone(300);
    const free = await lease();
    expect(free.data.flowId).toBe('free');
    await free.complete();
    const again = await lease();
    expect(again).toMatchObject({ jobId: busy.jobId, attempt: 1 });
    await again.complete();
  });

  it('removes a waiting job, and not a leased one', async () => {
    const waiting = job('gone');
    await queue.add(waiting, 1);
    expect(await queue.remove(waiting.runId)).toBe(true);
    await queue.add(job('kept'), 1);
    const leased = await lease();
    expect(leased.data.flowId).toBe('kept');
    expect(await queue.remove(leased.jobId)).toBe(false);
    await leased.complete();
    expect(await queue.counts()).toMatchObject({ waiting: 0, active: 0, delayed: 0 });
  });

  it('hands a fresh run to a waiting poll only once the queue was found empty, never past a waiting job', async () => {
    const fresh = (flowId: string) => () =>
      directLease(job(flowId), 1, { queue, nextWaiting: () => broker.nextWaiting() });
    // A job waits; a poll comes, and its fetch is on its way to that job: a fresh run may not
    // overtake it (a worker polling ahead of its result, while others queue).
    await queue.add(job('waiting'), 1);
    const polled = broker.next(5_000, signal);
    expect(broker.offer(fresh('overtaker'))).toBe(false);
    const first = await polled;
    expect(first?.data.flowId).toBe('waiting');
    await first?.complete();

    // Now the queue is empty and a poll's fetch blocks on it: a fresh run goes straight to it.
    const waiting = broker.next(5_000, signal);
    for (let i = 0; i < 100 && !broker.drained; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(broker.drained).toBe(true);
    expect(broker.offer(fresh('fresh'))).toBe(true);
    const handed = await waiting;
    expect(handed?.data.flowId).toBe('fresh');
    await handed?.complete();
  });
});
