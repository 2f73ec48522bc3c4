// Fault-injection row "SIGTERM" (to the app and to the worker during runs): in-flight
// work drains or is re-queued within the grace period (SHUTDOWN_GRACE_SECONDS), and the
// process exits 0. Re-queueing relies on the app starting a run again whose worker was lost
// (RUN_MAX_ATTEMPTS, default 2).
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  childrenOf,
  type FaultStack,
  HOLD_FLOW,
  isRunning,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const GRACE_SECONDS = 6;

/** Starts a sync hold run on `appUrl` and waits for its checkpoint (its engine's pid). */
async function holdRun(fault: FaultStack, appUrl: string, holdMs: number) {
  const tag = randomUUID();
  const answer = postWebhook(
    appUrl,
    'hold',
    { url: fault.beacon.urlFor(tag), holdMs },
    { timeoutMs: 60_000 },
  );
  answer.catch(() => {});
  return { checkpoint: await fault.beacon.reached(tag), answer };
}

/** Sends SIGTERM and waits for the exit; returns the code and how long it took. */
async function terminate(process_: { pid: number; exited: Promise<{ code: number | null }> }) {
  const sent = performance.now();
  process.kill(process_.pid, 'SIGTERM');
  const { code } = await process_.exited;
  return { code, ms: performance.now() - sent };
}

describe('SIGTERM to a worker with a run in flight', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    // Three: the first test stops one, the second stops another and needs the last to take over.
    fault = await startFaultStack({
      workers: 3,
      flows: { hold: HOLD_FLOW },
      workerEnv: { SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS), REUSE_SANDBOX: 'true' },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('drains a run shorter than the grace period: the run succeeds, the worker exits 0, its engine with it', async () => {
    const { checkpoint, answer } = await holdRun(fault, fault.url, 2_000);
    const worker = fault.stack.workers.find((w) => childrenOf(w.pid).includes(checkpoint.pid));
    if (worker === undefined) throw new Error('no worker holds the engine that reported');
    const { code, ms } = await terminate(worker);
    expect(code).toBe(0);
    expect(ms).toBeLessThanOrEqual(GRACE_SECONDS * 1000);
    const reply = await answer;
    expect(reply.status).toBe(200);
    expect((await waitForFinal(fault, reply.runId ?? '')).status).toBe('SUCCEEDED');
    expect(isRunning(checkpoint.pid)).toBe(false);
    report('SIGTERM worker, run shorter than the grace', {
      graceS: GRACE_SECONDS,
      exitCode: code,
      exitAfterS: seconds(ms),
    });
  });

  it('hands back a run longer than the grace period: the worker exits 0 within it, the run is re-queued to another worker', async () => {
    const tag = randomUUID();
    const answer = postWebhook(
      fault.url,
      'hold',
      { url: fault.beacon.urlFor(tag), holdMs: 60_000 },
      { timeoutMs: 60_000 },
    );
    answer.catch(() => {});
    const first = await fault.beacon.reached(tag);
    const worker = fault.stack.workers.find((w) => isRunning(w.pid) && childrenOf(w.pid).includes(first.pid));
    const other = fault.stack.workers.find((w) => w !== worker && isRunning(w.pid));
    if (worker === undefined || other === undefined)
      throw new Error('expected the run on one of two live workers');
    const { code, ms } = await terminate(worker);
    expect(code).toBe(0);
    expect(ms).toBeLessThanOrEqual(GRACE_SECONDS * 1000);
    // The engine's IPC channel closed with its worker: it exits on its own.
    await waitUntil(() => !isRunning(first.pid), 5_000, 'the engine of the stopped worker exits');
    // Re-queued: the run starts again on the other worker (whose checkpoint then holds; the
    // stack's close ends it).
    const second = await fault.beacon.reached(tag, 2);
    expect(second.runId).toBe(first.runId);
    expect(childrenOf(other.pid)).toContain(second.pid);
    report('SIGTERM worker, run longer than the grace', {
      graceS: GRACE_SECONDS,
      exitCode: code,
      exitAfterS: seconds(ms),
      requeuedOnOtherWorker: true,
    });
  });
});

describe('SIGTERM to an app with runs in flight on its workers', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      apps: 2,
      workers: 2,
      workerTargets: [0, 1],
      flows: { hold: HOLD_FLOW },
      appEnv: { SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS) },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('exits 0 within the grace period; the runs of its workers drain or are re-queued and succeed', async () => {
    const [entry] = fault.stack.appUrls as [string, string];
    // Two runs, one per worker (each takes one job at a time); callers wait on the app that stays.
    const runs = await Promise.all([holdRun(fault, entry, 2_000), holdRun(fault, entry, 2_000)]);
    const stoppingWorker = fault.stack.workers[1];
    const app = fault.stack.apps[1];
    if (stoppingWorker === undefined || app === undefined) throw new Error('stack without a second app');
    const held = childrenOf(stoppingWorker.pid);
    const stopping = runs.find((r) => held.includes(r.checkpoint.pid));
    const staying = runs.find((r) => r !== stopping);
    if (stopping === undefined || staying === undefined)
      throw new Error('the runs did not land one per worker');
    const { code, ms } = await terminate(app);
    expect(code).toBe(0);
    expect(ms).toBeLessThanOrEqual(GRACE_SECONDS * 1000);
    const [moved, kept] = await Promise.all([stopping.answer, staying.answer]);
    expect(kept.status).toBe(200);
    expect((await waitForFinal(fault, kept.runId ?? '')).status).toBe('SUCCEEDED');
    // The run its worker held is not lost with the app: it ends SUCCEEDED, drained or run again
    // by the worker of the app that stays.
    const movedRun = await waitForFinal(fault, moved.runId ?? '');
    report('SIGTERM app', {
      graceS: GRACE_SECONDS,
      exitCode: code,
      exitAfterS: seconds(ms),
      runOnStoppingApp:
        movedRun.error === null ? movedRun.status : `${movedRun.status} ${movedRun.error.code}`,
      attemptsOfThatRun: await fault.beacon.reached(stopping.checkpoint.tag, 2, 1).then(
        () => 2,
        () => 1,
      ),
    });
    expect(moved.status).toBe(200);
    expect(movedRun.status).toBe('SUCCEEDED');
  });
});
