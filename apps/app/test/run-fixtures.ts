import { randomUUID } from 'node:crypto';
import type { RunJobData, TriggerPayload } from '@flowbox/protocol';

/** A webhook request as a run keeps it: a JSON body, no headers or query. */
export const TEST_TRIGGER: TriggerPayload = {
  method: 'POST',
  body: { n: 1 },
  rawBody: null,
  rawBodyEncoding: 'utf8',
  headers: {},
  query: {},
};

/** A queued run's job for `flowId` (version `<flowId>-v1`), with a fresh run id. */
export function runJobData(flowId: string): RunJobData {
  return {
    version: 1,
    type: 'run-flow',
    runId: randomUUID(),
    flowId,
    flowVersionId: `${flowId}-v1`,
    trigger: { method: 'POST', headers: {}, query: {}, body: {}, rawBody: '{}', rawBodyEncoding: 'utf8' },
    syncInstanceId: null,
    acceptedAt: Date.now(),
  };
}

/**
 * A worker's `job-result` frame for `job`, as the worker sends it: by default the run
 * SUCCEEDED with no steps and no log; `runMs` 2 and `workerBusyMs` 4 among its timings.
 */
export function jobResult(
  job: { jobId: string; runId: string },
  outcome: Record<string, unknown> = { status: 'SUCCEEDED', steps: [], logKey: null },
  extra: { wantsNext?: boolean; isolation?: string } = {},
) {
  return {
    version: 1,
    type: 'job-result',
    workerId: 'w1',
    jobId: job.jobId,
    runId: job.runId,
    outcome,
    timings: { queueMs: 1, provisionMs: 0, bootMs: 0, runMs: 2, logPersistMs: 1, workerBusyMs: 4 },
    ...extra,
  };
}
