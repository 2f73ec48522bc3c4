// Fault-injection row "S3 down or slow" (stop the S3 server during runs): the run is
// finalised with the log failure recorded, and nothing hangs past its timeout. The stack has
// its own versitygw, which the test stops, freezes (SIGSTOP: connections accepted, nothing
// answered) and starts again; the shared one is never touched.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  codeFlow,
  type FaultStack,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const FLOW_TIMEOUT_SECONDS = 8;
/** The guarantee's slack past a timeout. */
const SLACK_MS = 2_000;

describe('S3 down or slow during runs', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      s3: 'private',
      flows: { unfetched: codeFlow('return { never: "fetched by the worker" };') },
      appEnv: { FLOW_TIMEOUT_SECONDS: String(FLOW_TIMEOUT_SECONDS) },
      workerEnv: { REUSE_SANDBOX: 'true' },
    });
    // The worker caches the benchmark flow's bundle and pieces now, so later runs need S3 only
    // for their logs.
    expect((await postWebhook(fault.url, 'benchmark')).status).toBe(200);
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('with S3 stopped: runs still answer and end, the log failure is recorded; a run needing a download fails fast', async () => {
    const s3 = fault.s3;
    if (s3 === undefined) throw new Error('the stack has no private S3');
    await s3.stop();
    try {
      const answer = await postWebhook(fault.url, 'benchmark');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ result: 6 });
      const runId = answer.runId ?? '';
      await waitForFinal(fault, runId, FLOW_TIMEOUT_SECONDS * 1000 + SLACK_MS);
      // The upload follows the outcome: its failure reaches the final run after it.
      await waitUntil(
        async () => (await fault.getRun(runId)).logError !== null,
        FLOW_TIMEOUT_SECONDS * 1000 + SLACK_MS,
        'the log failure is recorded',
      );
      const run = await fault.getRun(runId);
      expect(run).toMatchObject({
        status: 'SUCCEEDED',
        logKey: null,
        logError: { code: 'LOG_UPLOAD_FAILED' },
      });
      expect(run.steps.map((s) => s.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);

      // Not cached: provisioning needs S3 and fails at once, as a system error, not a hang.
      const unfetched = await postWebhook(fault.url, 'unfetched');
      expect(unfetched.status).toBe(500);
      expect(await waitForFinal(fault, unfetched.runId ?? '')).toMatchObject({
        status: 'INTERNAL_ERROR',
        error: { code: 'PROVISION_FAILED' },
      });
      report('S3 stopped', {
        answeredS: seconds(answer.ms),
        logError: run.logError?.message.slice(0, 120),
        provisionFailedAfterS: seconds(unfetched.ms),
      });
    } finally {
      await s3.start();
    }
    const after = await postWebhook(fault.url, 'unfetched');
    expect(after.status).toBe(200);
    const run = await waitForFinal(fault, after.runId ?? '');
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      logKey: `runs/${after.runId}/log.json`,
      logError: null,
    });
    // Stored once the upload that follows the outcome ends.
    await waitUntil(
      async () => (await fetch(String(run.logUrl))).status === 200,
      10_000,
      'the log is stored',
    );
  });

  it('with S3 frozen: the caller still gets its answer, and the run ends (its log failure recorded) within the flow timeout plus 2 s', async () => {
    const s3 = fault.s3;
    if (s3 === undefined) throw new Error('the stack has no private S3');
    s3.pause();
    let answer: Awaited<ReturnType<typeof postWebhook>>;
    let finalAfterMs: number;
    let run: Awaited<ReturnType<typeof waitForFinal>>;
    try {
      const started = performance.now();
      answer = await postWebhook(fault.url, 'benchmark');
      expect(answer.status).toBe(200);
      const runId = answer.runId ?? '';
      run = await waitForFinal(fault, runId, FLOW_TIMEOUT_SECONDS * 1000 + 2 * SLACK_MS);
      // A SUCCEEDED run's upload, which follows its outcome, fails within the flow timeout too.
      if (run.status === 'SUCCEEDED') {
        await waitUntil(
          async () => (await fault.getRun(runId)).logError !== null,
          FLOW_TIMEOUT_SECONDS * 1000 + SLACK_MS,
          'the log failure is recorded',
        );
        run = await fault.getRun(runId);
      }
      finalAfterMs = performance.now() - started;
    } finally {
      s3.resume();
    }
    expect(finalAfterMs).toBeLessThanOrEqual(FLOW_TIMEOUT_SECONDS * 1000 + SLACK_MS);
    // The log upload never got an answer: either its own timeout recorded the failure, or the
    // flow timeout ended the engine first. Both are final, and nothing waited longer.
    if (run.status === 'SUCCEEDED') expect(run.logError).toMatchObject({ code: 'LOG_UPLOAD_FAILED' });
    else expect(run).toMatchObject({ status: 'TIMEOUT', error: { code: 'FLOW_TIMEOUT' } });

    const next = await postWebhook(fault.url, 'benchmark');
    expect(next.status).toBe(200);
    expect((await waitForFinal(fault, next.runId ?? '')).logError).toBeNull();
    report('S3 frozen (SIGSTOP)', {
      flowTimeoutS: FLOW_TIMEOUT_SECONDS,
      answeredS: seconds(answer.ms),
      runFinalAfterS: seconds(finalAfterMs),
      outcome: run.error === null ? run.status : `${run.status} ${run.error.code}`,
    });
  });
});
