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
// flow's backlog does not hold back another flow's run.
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
    queue = new RunQueue({ connection: producer, prefix, maxAttempts: 2, logger });
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
    const leased = await broker.next(5_000, signal, 'worker-1');
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
    const polled = broker.next(5_000, signal, 'worker-1');
    expect(broker.offer(fresh('overtaker'))).toBe(false);
    const first = await polled;
    expect(first?.data.flowId).toBe('waiting');
    await first?.complete();

    // Now the queue is empty and a poll's fetch blocks on it: a fresh run goes straight to it.
    const waiting = broker.next(5_000, signal, 'worker-1');
    for (let i = 0; i < 100 && !broker.drained; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(broker.drained).toBe(true);
    expect(broker.offer(fresh('fresh'))).toBe(true);
    const handed = await waiting;
    expect(handed?.data.flowId).toBe('fresh');
    await handed?.complete();
  });

  /** A poll out on an empty queue, once the broker's fetch blocks (the terms of offer and claim). */
  const idlePoll = async (workerId: string, options: { timeoutMs?: number; signal?: AbortSignal } = {}) => {
    const polled = broker.next(options.timeoutMs ?? 5_000, options.signal ?? signal, workerId);
    for (let i = 0; i < 100 && !broker.drained; i += 1) await new Promise((r) => setTimeout(r, 10));
    expect(broker.drained).toBe(true);
    return polled;
  };
  const started = (flowId: string) =>
    directLease(job(flowId), 1, { queue, nextWaiting: () => broker.nextWaiting(), started: true });

  it('sets an idle poll aside for a run being accepted: the run goes to that worker, or the poll back in line', async () => {
    const polled = idlePoll('worker-a');
    const claim = broker.claim();
    expect(claim?.workerId).toBe('worker-a');
    // Claimed, the poll is out of line: no second claim and no offer reaches it.
    expect(broker.claim()).toBeNull();
    expect(broker.offer(() => started('other'))).toBe(false);
    // No run was created: the poll is first in line again, and the next run goes to it.
    claim?.putBack();
    const again = broker.claim();
    expect(again?.workerId).toBe('worker-a');
    expect(again?.give(started('accepted'))).toBe(true);
    expect(await polled).toMatchObject({ started: true, data: { flowId: 'accepted' } });
  });

  it("gives a claimed poll its run, even once the poll's time ran out meanwhile", async () => {
    const polled = idlePoll('worker-b', { timeoutMs: 50 });
    const claim = broker.claim();
    await new Promise((r) => setTimeout(r, 100));
    expect(claim?.give(started('accepted'))).toBe(true);
    expect(await polled).toMatchObject({ started: true, data: { flowId: 'accepted' } });
  });

  it('ends a claimed poll whose worker left: the run is refused back to its caller', async () => {
    const left = new AbortController();
    const polled = idlePoll('worker-c', { signal: left.signal });
    const claim = broker.claim();
    left.abort();
    expect(await polled).toBeNull();
    expect(claim?.give(started('orphan'))).toBe(false);
  });

  it('answers a put-back poll whose time ran out while claimed with no job', async () => {
    const polled = idlePoll('worker-d', { timeoutMs: 50 });
    const claim = broker.claim();
    await new Promise((r) => setTimeout(r, 100));
    claim?.putBack();
    expect(await polled).toBeNull();
    expect(broker.claim()).toBeNull();
  });
});
