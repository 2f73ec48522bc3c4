// Fault-injection row "a step test's engine SIGKILLed": the caller is answered FAILED
// ENGINE_CRASHED at once (not a 504 at WEBHOOK_TIMEOUT_SECONDS), the test is not tried again, no
// run is recorded, and the next test runs in another engine.
import { randomUUID } from 'node:crypto';
import type { StepTestAnswer } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../packages/local-services/src/index.ts';
import { manage } from '../../../app/test/app-harness.ts';
import { type FaultStack, HOLD_FLOW, isRunning, startFaultStack } from './fault-harness.ts';

describe('a step test whose engine dies', () => {
  let fault: FaultStack;
  const testHold = async (tag: string, holdMs: number) => {
    const response = await manage(
      fault.url,
      'POST',
      '/v1/flows/hold/steps/fault/test',
      { data: { trigger: { url: fault.beacon.urlFor(tag), holdMs } } },
      fault.stack.apiKey,
    );
    expect(response.status, await response.clone().text()).toBe(200);
    return (await response.json()) as StepTestAnswer;
  };

  beforeAll(async () => {
    fault = await startFaultStack({ flows: { hold: HOLD_FLOW }, appEnv: { WEBHOOK_TIMEOUT_SECONDS: '60' } });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('answers FAILED ENGINE_CRASHED once, records no run, and the next test runs elsewhere', async () => {
    const tag = randomUUID();
    const answer = testHold(tag, 60_000);
    answer.catch(() => {});
    const checkpoint = await fault.beacon.reached(tag);
    // The step ran as the test, under the test's id: no run has one.
    expect(checkpoint.runId).toMatch(/^steptest_/);
    process.kill(checkpoint.pid, 'SIGKILL');
    const failed = await answer;
    expect(failed).toMatchObject({ status: 'FAILED', error: { code: 'ENGINE_CRASHED' } });
    expect(isRunning(checkpoint.pid)).toBe(false);

    const next = await testHold(randomUUID(), 0);
    expect(next.status).toBe('SUCCEEDED');
    expect((next.output as { pid: number }).pid).not.toBe(checkpoint.pid);
    // Tried once: the killed test's step did not run again before or after the next one.
    expect(fault.beacon.count(tag)).toBe(1);
    const runs = await queryRows<{ count: string }>(fault.databaseUrl, 'SELECT count(*) FROM runs');
    expect(runs[0]?.count).toBe('0');
  });
});
