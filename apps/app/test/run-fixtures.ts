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
