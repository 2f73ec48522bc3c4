// Error flows (`onFailure`) on a real stack (two apps, a worker, Postgres, Redis, S3): a failed run
// starts its flow's error flow once with a report of the failure; an error flow's own failure
// starts nothing; a deleted error flow is recorded on the failed run.
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../packages/local-services/src/index.ts';
import { manage } from '../../app/test/app-harness.ts';
import {
  codeFlow,
  type FaultStack,
  postWebhook,
  startFaultStack,
  waitForFinal,
} from './faults/fault-harness.ts';

const withErrorFlow = (definition: FlowDefinition, onFailure: string): FlowDefinition => ({
  ...definition,
  onFailure,
});
const THROWS = codeFlow("throw new Error('boom for the error flow');");
/** Answers with the report it was started with. */
const REPORT = codeFlow('return { seen: inputs.report };') as unknown as {
  steps: Array<{ input: Record<string, unknown> }>;
};
const [reportStep] = REPORT.steps;
if (reportStep !== undefined) reportStep.input = { report: '{{trigger.body}}' };

describe('error flows on a real stack', () => {
  let fault: FaultStack;
  let appB: string;
  const sql = <T extends Record<string, unknown>>(text: string, params: unknown[] = []) =>
    queryRows<T>(fault.databaseUrl, text, params);

  beforeAll(async () => {
    // In order: a flow's error flow exists before the flow is published.
    fault = await startFaultStack({
      apps: 2,
      workers: 1,
      flows: {
        report: REPORT as unknown as FlowDefinition,
        'report-breaks': withErrorFlow(THROWS, 'report'),
        failing: withErrorFlow(THROWS, 'report'),
        'fails-into-breaks': withErrorFlow(THROWS, 'report-breaks'),
        'doomed-handler': REPORT as unknown as FlowDefinition,
        orphan: withErrorFlow(THROWS, 'doomed-handler'),
      },
    });
    appB = fault.stack.appUrls[1] ?? '';
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('starts the error flow once with the failed run, its status, error and failed step', async () => {
    const answer = await postWebhook(appB, 'failing', { n: 1 }, { sync: false });
    expect(answer.status).toBe(202);
    const failed = await waitForFinal(fault, String(answer.runId));
    expect(failed).toMatchObject({ status: 'FAILED', source: 'webhook' });
    const errorRunId = failed.errorRun;
    expect(errorRunId).toMatch(/^[0-9a-f-]{36}$/);
    const errorRun = await waitForFinal(fault, String(errorRunId));
    expect(errorRun).toMatchObject({
      flowId: 'report',
      status: 'SUCCEEDED',
      sync: false,
      causedBy: failed.id,
      source: 'error_flow',
    });
    const report = {
      runId: failed.id,
      flowId: 'failing',
      flowVersionId: 'failing-v1',
      status: 'FAILED',
      error: { code: 'CODE_STEP_FAILED', message: expect.stringContaining('boom for the error flow') },
      failedStep: expect.objectContaining({ name: 'code' }),
    };
    expect(errorRun.steps.find((step) => step.name === 'code')?.output).toEqual({ seen: report });
    const rows = await sql<{ id: string; trigger: { body: unknown; headers: unknown } }>(
      'SELECT id, trigger FROM runs WHERE caused_by = $1',
      [failed.id],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.trigger).toMatchObject({ body: report, headers: { 'content-type': 'application/json' } });
  });

  it("starts nothing when an error flow's own run fails (one level)", async () => {
    const answer = await postWebhook(fault.url, 'fails-into-breaks', {}, { sync: false });
    const failed = await waitForFinal(fault, String(answer.runId));
    expect(failed.status).toBe('FAILED');
    const errorRun = await waitForFinal(fault, String(failed.errorRun));
    expect(errorRun).toMatchObject({ flowId: 'report-breaks', status: 'FAILED', causedBy: failed.id });
    // report-breaks names `report` as its error flow: not for a run that is an error run itself.
    expect(errorRun.errorRun).toBeNull();
    expect(errorRun.errorFlowSkipped).toBeNull();
    expect(await sql('SELECT id FROM runs WHERE caused_by = $1', [errorRun.id])).toEqual([]);
  });

  it('records on the failed run that a deleted error flow could not start', async () => {
    const deleted = await manage(
      fault.url,
      'DELETE',
      '/v1/flows/doomed-handler',
      undefined,
      fault.stack.apiKey,
    );
    expect(deleted.status).toBe(204);
    const answer = await postWebhook(appB, 'orphan', {}, { sync: false });
    const failed = await waitForFinal(fault, String(answer.runId));
    expect(failed).toMatchObject({ status: 'FAILED', errorRun: null });
    expect(failed.errorFlowSkipped).toBe('error flow doomed-handler does not exist (deleted)');
    expect(await sql("SELECT id FROM runs WHERE flow_id = 'doomed-handler'")).toEqual([]);
  });

  it('refuses to publish an onFailure that names the flow itself or no flow', async () => {
    const create = (id: string, onFailure: string) =>
      manage(
        fault.url,
        'POST',
        '/v1/flows',
        { id, name: id, definition: withErrorFlow(THROWS, onFailure), publish: true },
        fault.stack.apiKey,
      );
    const self = await create('self-handler', 'self-handler');
    expect(self.status).toBe(400);
    expect(await self.json()).toMatchObject({
      error: { code: 'INVALID_FLOW', message: expect.stringContaining('its own error flow') },
    });
    const unknown = await create('unknown-handler', 'no-such-flow');
    expect(unknown.status).toBe(400);
    expect(await unknown.json()).toMatchObject({
      error: { code: 'INVALID_FLOW', message: expect.stringContaining('no-such-flow does not exist') },
    });
  });
});
