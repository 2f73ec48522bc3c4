import { describe, expect, it } from 'vitest';
import { runJobData } from '../../test/run-fixtures.ts';
import type { JobSource } from './job-source.ts';
import type { LeasedJob } from './leased-job.ts';
import { RunHandoff } from './run-handoff.ts';
import type { RunQueue } from './run-queue.ts';
import type { PollClaim } from './waiting-polls.ts';

/** RunHandoff's choices alone: the broker and the queue are stand-ins that record their calls. */
function handoff(
  options: { startOnAccept?: boolean; redisDown?: boolean; claim?: PollClaim | null; idle?: number } = {},
) {
  const calls: string[] = [];
  let idle = options.idle ?? 0;
  const lost: LeasedJob[] = [];
  const broker = {
    claim: () => {
      calls.push('claim');
      return options.claim ?? null;
    },
    offer: () => {
      calls.push('offer');
      if (idle === 0) return false;
      idle--;
      return true;
    },
  } as unknown as JobSource;
  const queue = {
    add: async () => {
      calls.push('add');
    },
    addBulk: async (runs: unknown[]) => {
      calls.push(`addBulk:${runs.length}`);
    },
  } as unknown as RunQueue;
  const subject = new RunHandoff({
    queue,
    broker,
    direct: true,
    startOnAccept: options.startOnAccept ?? true,
    redisDown: () => options.redisDown ?? false,
    workerLost: async (lease) => {
      lost.push(lease);
    },
  });
  return { subject, calls, lost };
}

const claimOf = (gives: boolean): PollClaim & { given: LeasedJob[] } => {
  const given: LeasedJob[] = [];
  return {
    workerId: 'w1',
    given,
    give: (lease) => {
      given.push(lease);
      return gives;
    },
    putBack: () => {},
  };
};

describe('RunHandoff', () => {
  it('reserves no worker under FLOW_MAX_CONCURRENT_RUNS or while Redis is down', () => {
    expect(handoff({ startOnAccept: false, claim: claimOf(true) }).subject.reserve()).toBeNull();
    expect(handoff({ redisDown: true, claim: claimOf(true) }).subject.reserve()).toBeNull();
    const claim = claimOf(true);
    expect(handoff({ claim }).subject.reserve()).toBe(claim);
  });

  it('gives a reserved worker its run as started, with no queue or offer', async () => {
    const { subject, calls } = handoff();
    const claim = claimOf(true);
    expect(await subject.submit(runJobData('f'), 1, claim)).toBe('handed');
    expect(claim.given).toHaveLength(1);
    expect(claim.given[0]).toMatchObject({ started: true, attempt: 1 });
    expect(calls).toEqual([]);
  });

  it('sends a started run whose reserved worker left down the lost-worker path', async () => {
    const { subject, calls, lost } = handoff();
    const claim = claimOf(false);
    expect(await subject.submit(runJobData('f'), 1, claim)).toBe('handed');
    expect(lost).toHaveLength(1);
    expect(lost[0]).toMatchObject({ started: true, data: { flowId: 'f' } });
    expect(calls).toEqual([]);
  });

  it('offers, then queues, a run with no reserved worker', async () => {
    const { subject, calls, lost } = handoff();
    expect(await subject.submit(runJobData('f'), 1)).toBe('queued');
    expect(calls).toEqual(['offer', 'add']);
    expect(lost).toEqual([]);
  });

  it('hands many runs to the idle workers, and queues the rest in one bulk add', async () => {
    const { subject, calls } = handoff({ idle: 2 });
    const runs = ['a', 'b', 'c', 'd', 'e'].map((flowId) => ({ job: runJobData(flowId), rank: 1 }));
    expect(await subject.submitMany(runs)).toEqual(['handed', 'handed', 'queued', 'queued', 'queued']);
    expect(calls).toEqual(['offer', 'offer', 'offer', 'addBulk:3']);
  });
});
