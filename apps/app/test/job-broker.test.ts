import { randomUUID } from 'node:crypto';
import { createLogger } from '@flowbox/node-kit';
import type { RunJobData } from '@flowbox/protocol';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { testNamespace } from '../../../test/fixtures.ts';
import { JobBroker } from '../src/queue/job-broker.ts';
import type { LeasedJob } from '../src/queue/leased-job.ts';
import { RUN_QUEUE_NAME, RunQueue } from '../src/queue/run-queue.ts';

/**
 * Settling a job Redis no longer holds (it restarted empty, or another hand settled it) is no
 * error: the run's row stands. The broker knows such a job by BullMQ's error codes. Real Redis.
 */
describe('JobBroker settling a job Redis no longer holds', () => {
  const prefix = testNamespace();
  let redis: Redis;
  let queue: RunQueue;
  let broker: JobBroker;

  beforeAll(async () => {
    redis = new Redis(inject('redisUrl'), { maxRetriesPerRequest: null });
    const logger = createLogger({ name: 'job-broker-test', level: 'silent' });
    queue = new RunQueue({ connection: redis, prefix, maxAttempts: 2, logger });
    broker = new JobBroker({
      connection: redis,
      prefix,
      logger,
      blockSeconds: 1,
    });
    await broker.start();
  });
  afterAll(async () => {
    await broker.close();
    await queue.close();
    redis.disconnect();
  });

  async function leased(): Promise<LeasedJob> {
    const runId = randomUUID();
    const data: RunJobData = {
      version: 1,
      type: 'run-flow',
      runId,
      flowId: 'f',
      flowVersionId: 'f-v1',
      trigger: { method: 'POST', headers: {}, query: {}, body: {}, rawBody: null, rawBodyEncoding: 'utf8' },
      syncInstanceId: null,
      acceptedAt: Date.now(),
    };
    await queue.add(data);
    const lease = await broker.next(10_000, new AbortController().signal, 'w1');
    if (lease?.jobId !== runId) throw new Error(`expected the job of run ${runId}, got ${lease?.jobId}`);
    return lease;
  }

  it('completes a job whose lock is gone (JobLockNotExist) as done, fetching nothing', async () => {
    const lease = await leased();
    await redis.del(`${prefix}:${RUN_QUEUE_NAME}:${lease.jobId}:lock`);
    await expect(lease.complete({ fetchNext: true })).resolves.toBeNull();
  });

  it('fails a job whose key is gone (JobNotExist) as done', async () => {
    const lease = await leased();
    await redis.del(`${prefix}:${RUN_QUEUE_NAME}:${lease.jobId}`);
    await expect(lease.fail('boom')).resolves.toBeNull();
  });

  it('completes a job once: the second complete finds it gone', async () => {
    const lease = await leased();
    await expect(lease.complete()).resolves.toBeNull();
    await expect(lease.complete()).resolves.toBeNull();
  });
});
