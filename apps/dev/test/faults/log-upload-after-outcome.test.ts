// Fault-injection rows "the log upload off the worker's cycle": a run's outcome is recorded as
// soon as its steps end, its worker takes the next job while the engine still uploads the log,
// a failed upload is recorded on the run afterwards, and a worker lost between the two leaves
// the run final with its outcome. S3 is slowed deterministically: a gate in front of it holds
// every log upload until the test lets it through or refuses it (s3-gate.ts). No timing decides.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultStack,
  isRunning,
  postWebhook,
  processesUnder,
  report,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';
import type { S3Gate } from './s3-gate.ts';

const MODES = [
  { name: 'isolate', workerEnv: { RUN_ISOLATION: 'isolate' } },
  { name: 'shared', workerEnv: { RUN_ISOLATION: 'shared' } },
  { name: 'process', workerEnv: { RUN_ISOLATION: 'process' } },
  { name: 'SANDBOXED shared', workerEnv: { RUN_ISOLATION: 'shared', EXECUTION_MODE: 'SANDBOXED' } },
] as const;

const logKeyOf = (runId: string | null) => `runs/${runId}/log.json`;

describe.each(MODES)('the log upload after the outcome ($name)', ({ name, workerEnv }) => {
  let fault: FaultStack;
  let gate: S3Gate;
  /** Uploads the gate has seen so far: each test waits for the next ones. */
  let uploads = 0;
  let stored = 0;

  beforeAll(async () => {
    fault = await startFaultStack({ s3Gate: true, workerEnv });
    if (fault.s3Gate === undefined) throw new Error('the stack has no S3 gate');
    gate = fault.s3Gate;
    // The worker caches the benchmark flow's bundle and pieces now: later runs use S3 only for logs.
    const first = await postWebhook(fault.url, 'benchmark');
    expect(first.body).toEqual({ result: 6 });
    uploads += 1;
    stored += 1;
    await gate.stored(stored);
  });

  afterAll(async () => {
    gate?.set('pass');
    await fault?.close();
  });

  it("runs the next job to its end while the last run's log upload is still held, and stores both logs once let through", async () => {
    gate.set('hold');
    const first = await postWebhook(fault.url, 'benchmark');
    expect(first).toMatchObject({ status: 200, body: { result: 6 } });
    uploads += 1;
    await gate.arrived(uploads);
    // Final from the outcome the engine reported, its log key already on it.
    expect(await waitForFinal(fault, first.runId ?? '')).toMatchObject({
      status: 'SUCCEEDED',
      logKey: logKeyOf(first.runId),
      logError: null,
    });

    const second = await postWebhook(fault.url, 'benchmark');
    expect(second).toMatchObject({ status: 200, body: { result: 6 } });
    const secondRun = await waitForFinal(fault, second.runId ?? '');
    expect(secondRun).toMatchObject({ status: 'SUCCEEDED', logKey: logKeyOf(second.runId) });
    uploads += 1;
    await gate.arrived(uploads);
    // The second run ran start to end, its own upload reached S3's door, and the first run's
    // upload was still waiting there all along.
    expect(gate.holding).toBe(2);

    gate.set('pass');
    stored += 2;
    await gate.stored(stored);
    for (const runId of [first.runId, second.runId]) {
      const run = await fault.getRun(runId ?? '');
      expect(run).toMatchObject({ status: 'SUCCEEDED', logKey: logKeyOf(runId), logError: null });
      const log = await fetch(String(run.logUrl));
      expect(log.status).toBe(200);
      expect(await log.json()).toMatchObject({ runId, status: 'SUCCEEDED' });
    }
    report(`log upload held across the next job (${name})`, { held: 2, nextRun: secondRun.status });
  });

  it('records a failed upload on the final run as logError, the outcome kept', async () => {
    gate.set('hold');
    const answer = await postWebhook(fault.url, 'benchmark');
    expect(answer).toMatchObject({ status: 200, body: { result: 6 } });
    uploads += 1;
    await gate.arrived(uploads);
    const runId = answer.runId ?? '';
    expect(await waitForFinal(fault, runId)).toMatchObject({ status: 'SUCCEEDED', logKey: logKeyOf(runId) });

    gate.set('fail');
    await waitUntil(
      async () => (await fault.getRun(runId)).logError !== null,
      15_000,
      'the log failure is recorded',
    );
    const run = await fault.getRun(runId);
    expect(run).toMatchObject({
      status: 'SUCCEEDED',
      error: null,
      logKey: null,
      logUrl: null,
      logError: { code: 'LOG_UPLOAD_FAILED', message: expect.stringMatching(/503/) },
      attempts: 1,
    });
    expect(run.steps.map((step) => step.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);

    // The worker serves on, its next log stored.
    gate.set('pass');
    const next = await postWebhook(fault.url, 'benchmark');
    expect(next.body).toEqual({ result: 6 });
    uploads += 1;
    stored += 1;
    await gate.stored(stored);
    // Its result may reach the app after its log reached S3: both are on their way at once.
    expect(await waitForFinal(fault, next.runId ?? '')).toMatchObject({
      status: 'SUCCEEDED',
      logError: null,
    });
  });

  it('leaves the run final with its outcome, never run again, when its worker is SIGKILLed before the upload ended', async () => {
    const workerPid = fault.stack.workers[0]?.pid ?? -1;
    gate.set('hold');
    const answer = await postWebhook(fault.url, 'benchmark');
    expect(answer).toMatchObject({ status: 200, body: { result: 6 } });
    uploads += 1;
    await gate.arrived(uploads);
    const runId = answer.runId ?? '';
    expect(await waitForFinal(fault, runId)).toMatchObject({ status: 'SUCCEEDED', attempts: 1 });

    const disconnectsBefore = disconnects(fault);
    process.kill(workerPid, 'SIGKILL');
    // Its engines exit with it (their IPC channel closed), the held upload's connection too.
    await waitUntil(
      () => !isRunning(workerPid) && processesUnder(fault.dataDir).length === 0,
      10_000,
      'the worker and its engines are gone',
    );
    await waitUntil(() => gate.holding === 0, 10_000, "the dead engine's upload leaves the gate");
    // The app saw the worker go (the lost-worker path has run for whatever it still held).
    await waitUntil(() => disconnects(fault) > disconnectsBefore, 10_000, 'the app sees the worker go');

    gate.set('pass');
    const run = await fault.getRun(runId);
    // The outcome reported before the kill stands: not WORKER_LOST, not queued again.
    expect(run).toMatchObject({ status: 'SUCCEEDED', error: null, attempts: 1, logKey: logKeyOf(runId) });
    expect(run.steps.map((step) => step.name)).toEqual(['trigger', 'step_1', 'step_2', 'step_3']);
    // No log arrived: its upload died with the engine.
    expect((await fetch(String(run.logUrl))).status).toBe(404);
    report(`worker SIGKILL before the log upload ended (${name})`, {
      run: run.status,
      attempts: run.attempts,
    });
  });
});

function disconnects(fault: FaultStack): number {
  return fault.lines.filter(({ line }) => line.json?.msg === 'worker disconnected').length;
}
