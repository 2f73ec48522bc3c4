import type { DispatchedPollJob } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { PollJobs } from './poll-jobs.ts';

const job = (jobId: string): DispatchedPollJob => ({
  jobId,
  flowId: 'f',
  flowVersionId: 'v',
  bundle: { url: 'http://s3.example/b', sha256: 'a'.repeat(64), sizeBytes: 1 },
  pieces: [],
  state: null,
  timeoutMs: 1_000,
  maxResultBytes: 1_000,
  acceptedAt: 0,
});

describe('polls waiting for a worker', () => {
  it('hands them out oldest first, drops those whose lease ran out, and tells listeners of each new one', () => {
    const jobs = new PollJobs();
    const heard: number[] = [];
    const stop = jobs.onAdded(() => heard.push(jobs.waiting));
    jobs.add({ job: job('expired'), startFrom: 'new' }, Date.now() - 1);
    jobs.add({ job: job('first'), startFrom: 'all' }, Date.now() + 60_000);
    jobs.add({ job: job('second'), startFrom: 'new' }, Date.now() + 60_000);
    stop();
    jobs.add({ job: job('third'), startFrom: 'new' }, Date.now() + 60_000);
    expect(heard).toEqual([0, 1, 2]);
    expect(jobs.waiting).toBe(3);
    expect(jobs.take()).toEqual({ job: job('first'), startFrom: 'all' });
    expect(jobs.take()?.job.jobId).toBe('second');
    expect(jobs.take()?.job.jobId).toBe('third');
    expect(jobs.take()).toBeUndefined();
  });
});
