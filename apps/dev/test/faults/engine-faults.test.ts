// Fault-injection row "engine SIGKILLed or crashing" (kill -9; process.exit from a
// piece): the run is FAILED with the reason, and the worker takes the next job with a fresh
// engine. Also: an engine whose worker is SIGKILLed exits on its own (its IPC channel closed).
// A crashed run may be started again (RUN_MAX_ATTEMPTS): the tests crash every attempt, so the
// run ends FAILED whatever that setting, and each attempt must have had a fresh engine.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  enginesOf,
  enginesUnder,
  type FaultStack,
  faultsFlow,
  HOLD_FLOW,
  isRunning,
  postWebhook,
  processesUnder,
  report,
  seconds,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const FLOWS = {
  hold: HOLD_FLOW,
  exits: faultsFlow('exit', { code: 3 }),
  uncaught: faultsFlow('throw_uncaught', {}),
};

interface ErrorAnswer {
  error: { code: string; message: string };
  status: string;
}

/** Runs the hold flow to its checkpoint (holding `holdMs`); returns its engine and its answer. */
async function reachCheckpoint(fault: FaultStack, holdMs: number) {
  const tag = randomUUID();
  const answer = postWebhook(fault.url, 'hold', { url: fault.beacon.urlFor(tag), holdMs });
  answer.catch(() => {});
  const checkpoint = await fault.beacon.reached(tag);
  return { checkpoint, answer };
}

for (const mode of ['warm', 'cold'] as const) {
  describe(`engine faults (${mode} engines)`, () => {
    let fault: FaultStack;
    let workerPid: number;

    beforeAll(async () => {
      fault = await startFaultStack({
        flows: FLOWS,
        workerEnv: mode === 'warm' ? { REUSE_SANDBOX: 'true' } : { REUSE_SANDBOX: 'false', PREWARM: 'true' },
      });
      workerPid = fault.stack.workers[0]?.pid ?? -1;
      // A first run, so the worker's cache and engine are warm and the faults below hit a running engine.
      const first = await reachCheckpoint(fault, 0);
      expect((await first.answer).status).toBe(200);
    });

    afterAll(async () => {
      await fault?.close();
    });

    it('fails the run with ENGINE_CRASHED when its engine is SIGKILLed, and runs the next job in a fresh engine', async () => {
      const tag = randomUUID();
      const answer = postWebhook(fault.url, 'hold', { url: fault.beacon.urlFor(tag), holdMs: 60_000 });
      let answered = false;
      void answer.then(
        () => {
          answered = true;
        },
        () => {},
      );
      // Kill the engine of every attempt as it reaches its checkpoint, until the run ends.
      const killed: number[] = [];
      let firstKill = 0;
      for (let attempt = 1; !answered; attempt++) {
        const checkpoint = await Promise.race([
          fault.beacon.reached(tag, attempt, 60_000),
          answer.then(() => null),
        ]);
        if (checkpoint === null) break;
        // The pid the step reported is the worker's own child: the engine running this run.
        expect(enginesOf(workerPid)).toContain(checkpoint.pid);
        firstKill ||= performance.now();
        process.kill(checkpoint.pid, 'SIGKILL');
        killed.push(checkpoint.pid);
      }
      const reply = await answer;
      const answeredMs = performance.now() - firstKill;
      expect(reply.status).toBe(500);
      expect(reply.body).toMatchObject({ status: 'INTERNAL_ERROR', error: { code: 'ENGINE_CRASHED' } });
      const run = await waitForFinal(fault, reply.runId ?? '');
      expect(run.status).toBe('INTERNAL_ERROR');
      expect(run.error).toMatchObject({
        code: 'ENGINE_CRASHED',
        message: expect.stringContaining('SIGKILL'),
      });
      // Every attempt ran in an engine of its own, and none of them is left.
      expect(new Set(killed).size).toBe(killed.length);
      for (const pid of killed) expect(isRunning(pid)).toBe(false);

      const next = await reachCheckpoint(fault, 0);
      const recovered = performance.now() - firstKill;
      expect(killed).not.toContain(next.checkpoint.pid);
      expect((await next.answer).status).toBe(200);
      report(`engine SIGKILL (${mode})`, {
        attemptsKilled: killed.length,
        answered500AfterFirstKillS: seconds(answeredMs),
        nextRunOnFreshEngineAfterS: seconds(recovered),
      });
    });

    it('fails the run with ENGINE_CRASHED and the exit code when a piece calls process.exit, then recovers', async () => {
      const before = enginesOf(workerPid);
      const started = performance.now();
      const reply = await postWebhook(fault.url, 'exits', {});
      expect(reply.status).toBe(500);
      const body = reply.body as ErrorAnswer;
      expect(body.error.code).toBe('ENGINE_CRASHED');
      expect(body.error.message).toMatch(/code 3\b/);
      const run = await waitForFinal(fault, reply.runId ?? '');
      expect(run).toMatchObject({ status: 'INTERNAL_ERROR', error: { code: 'ENGINE_CRASHED' } });

      const next = await reachCheckpoint(fault, 0);
      expect((await next.answer).status).toBe(200);
      // Warm: the one engine there was ran the exit and is gone. Cold: every job gets a new one anyway.
      if (mode === 'warm') {
        expect(before).toHaveLength(1);
        expect(before).not.toContain(next.checkpoint.pid);
        expect(isRunning(before[0] ?? -1)).toBe(false);
      }
      report(`piece process.exit(3) (${mode})`, {
        failedAfterS: seconds(reply.ms),
        nextRunOkAfterS: seconds(performance.now() - started),
      });
    });

    it('fails the run with ENGINE_CRASHED when a piece throws an uncaught exception, then recovers', async () => {
      const reply = await postWebhook(fault.url, 'uncaught', {});
      expect(reply.status).toBe(500);
      expect((reply.body as ErrorAnswer).error).toMatchObject({
        code: 'ENGINE_CRASHED',
        message: expect.stringMatching(/code 1\b/),
      });
      expect((await waitForFinal(fault, reply.runId ?? '')).status).toBe('INTERNAL_ERROR');
      const next = await reachCheckpoint(fault, 0);
      expect((await next.answer).status).toBe(200);
    });

    it("leaves at most the engine in use and one spare, all the worker's own: no engine piles up after the crashes", async () => {
      const limit = mode === 'warm' ? 1 : 2;
      // An engine killed a moment ago may still be on its way out; settle, then count.
      await waitUntil(
        () => {
          const engines = enginesUnder(fault.dataDir);
          const own = enginesOf(workerPid);
          return engines.length <= limit && engines.every((pid) => own.includes(pid));
        },
        5_000,
        `at most ${limit} engine(s), all children of the worker`,
      );
    });

    it('ends the engine when its worker is SIGKILLed mid-run (IPC closed); the app fails or re-queues the run', async () => {
      const { checkpoint } = await reachCheckpoint(fault, 60_000);
      const engines = enginesOf(workerPid);
      expect(engines).toContain(checkpoint.pid);
      const killed = performance.now();
      process.kill(workerPid, 'SIGKILL');
      // Every engine of that worker (the running one and a spare) exits without being told to,
      // and with it every process it started (the node inside an engine's launcher ends a moment
      // after the launcher).
      await waitUntil(
        () => engines.every((pid) => !isRunning(pid)) && processesUnder(fault.dataDir).length === 0,
        10_000,
        'engines of a killed worker and their processes exit',
      );
      const enginesGoneMs = performance.now() - killed;
      expect(processesUnder(fault.dataDir)).toEqual([]);

      // The app holding the lease saw the worker go: the run ends WORKER_LOST, or goes back to
      // the queue for another attempt (RUN_MAX_ATTEMPTS) that no worker is left to take here.
      const { runId } = checkpoint;
      await waitUntil(
        async () => (await fault.getRun(runId)).status !== 'RUNNING',
        10_000,
        'the run leaves RUNNING',
      );
      const run = await fault.getRun(runId);
      if (run.status === 'QUEUED') expect(run.error).toMatchObject({ code: 'WORKER_LOST' });
      else expect(run).toMatchObject({ status: 'INTERNAL_ERROR', error: { code: 'WORKER_LOST' } });
      report(`worker SIGKILL (${mode})`, {
        enginesExitedAfterS: seconds(enginesGoneMs),
        runLeftRunningAfterS: seconds(performance.now() - killed),
        run: run.status,
        orphanEngines: enginesUnder(fault.dataDir).length,
      });
    });
  });
}
