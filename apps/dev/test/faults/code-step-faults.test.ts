// Fault-injection rows "isolate out of memory" (a code step allocating without bound
// under a low memory limit: step FAILED with a memory error, worker and engine healthy or the
// engine replaced, next run succeeds) and "code step hangs" (`while(true){}`, an awaited promise
// that never settles: FAILED within the step timeout plus 2 s).
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  codeFlow,
  enginesOf,
  type FaultStack,
  faultsFlow,
  isRunning,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  waitForFinal,
} from './fault-harness.ts';

const STEP_TIMEOUT_MS = 2_000;
const MEMORY_MB = 16;
/** The guarantee: a hung step ends within its timeout plus this. */
const SLACK_MS = 2_000;

const FLOWS = {
  hoards: codeFlow('const hoard = []; for (;;) hoard.push(new Array(100000).fill({ n: hoard.length }));'),
  spins: codeFlow('while (true) {}'),
  waits: codeFlow('await new Promise(() => {}); return { unreachable: true };'),
  'spins-after-await': codeFlow('await Promise.resolve(); for (;;) {}'),
  throws: codeFlow("const fail = () => { throw new TypeError('boom from the flow'); };\nfail();"),
  'piece-throws': faultsFlow('attempt', { what: 'no-such-attempt' }),
};

interface FailedAnswer {
  status: string;
  step?: string;
  error: { code: string; message: string };
}

for (const mode of ['SANDBOX_CODE_ONLY', 'UNSANDBOXED'] as const) {
  describe(`code-step faults (${mode})`, () => {
    let fault: FaultStack;
    let workerPid: number;

    beforeAll(async () => {
      fault = await startFaultStack({
        flows: FLOWS,
        appEnv: { CODE_STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS), CODE_STEP_MEMORY_MB: String(MEMORY_MB) },
        workerEnv: { REUSE_SANDBOX: 'true', EXECUTION_MODE: mode },
      });
      workerPid = fault.stack.workers[0]?.pid ?? -1;
      expect((await postWebhook(fault.url, 'benchmark')).status).toBe(200);
    });

    afterAll(async () => {
      await fault?.close();
    });

    for (const flowId of ['spins', 'waits', 'spins-after-await']) {
      it(`fails ${flowId} with CODE_STEP_TIMEOUT within the step timeout plus 2 s, and serves the next run`, async () => {
        const answer = await postWebhook(fault.url, flowId);
        expect(answer.status).toBe(500);
        expect(answer.body).toMatchObject({ step: 'code', error: { code: 'CODE_STEP_TIMEOUT' } });
        const run = await waitForFinal(fault, answer.runId ?? '');
        expect(run).toMatchObject({ status: 'FAILED', error: { code: 'CODE_STEP_TIMEOUT', step: 'code' } });
        const step = run.steps.find((s) => s.name === 'code') as { durationMs?: number } | undefined;
        expect(step?.durationMs).toBeLessThanOrEqual(STEP_TIMEOUT_MS + SLACK_MS);
        // The caller's deadline is the same, once the time its run waited for a worker and an
        // engine (recorded on the run) is taken out: nothing after the step holds the answer up.
        const t = run.timings ?? {};
        const waited = (t.queueMs ?? 0) + (t.provisionMs ?? 0) + (t.bootMs ?? 0);
        expect(answer.ms - waited).toBeLessThanOrEqual(STEP_TIMEOUT_MS + SLACK_MS);

        expect(isRunning(workerPid)).toBe(true);
        const next = await postWebhook(fault.url, 'benchmark');
        expect(next.status).toBe(200);
        expect(next.body).toEqual({ result: 6 });
        report(`code step ${flowId} (${mode})`, {
          stepTimeoutS: seconds(STEP_TIMEOUT_MS),
          answeredFailedAfterS: seconds(answer.ms),
          stepDurationS: seconds(step?.durationMs ?? Number.NaN),
        });
      });
    }

    // Stacks users see (the caller's answer, the run, its log) show the flow's
    // frames only, never the engine's or the worker's files under its cache.
    it("shows a failing step's flow-relative frames only, with no cache path, in the answer, the run and its log", async () => {
      const cacheDir = join(fault.dataDir, 'cache-0');
      const internal = [cacheDir, 'engine.mjs', 'node:internal', '/engine/'];
      for (const [flowId, frame] of [
        ['throws', /\n\s+at fail \(file:\/\/\/code-step\.js:1:\d+\)/],
        ['piece-throws', /\n\s+at .*pieces\/faults@0\.1\.0\/[^\s)]+:\d+:\d+/],
      ] as const) {
        const answer = await postWebhook(fault.url, flowId);
        expect(answer.status, flowId).toBe(500);
        const run = await waitForFinal(fault, answer.runId ?? '');
        const stack = (run.error as { stack?: string } | null)?.stack ?? '';
        expect(stack, flowId).toMatch(frame);
        const response = await fetch(run.logUrl ?? '');
        expect(response.status, flowId).toBe(200);
        const seen = [JSON.stringify(answer.body), JSON.stringify(run), await response.text()];
        for (const [where, text] of seen.entries()) {
          for (const path of internal)
            expect(text, `${flowId}: ${path} in view ${where}`).not.toContain(path);
        }
        report(`user-visible stack (${mode}, ${flowId})`, { stack });
      }
    });

    if (mode === 'SANDBOX_CODE_ONLY') {
      it('fails unbounded allocation with CODE_STEP_MEMORY_LIMIT; the worker stays up, its engine is kept or replaced, and the next run succeeds', async () => {
        const enginesBefore = enginesOf(workerPid);
        const answer = await postWebhook(fault.url, 'hoards');
        expect(answer.status).toBe(500);
        const body = answer.body as FailedAnswer;
        expect(body).toMatchObject({ step: 'code', error: { code: 'CODE_STEP_MEMORY_LIMIT' } });
        expect(body.error.message).toContain(`${MEMORY_MB} MB`);
        const run = await waitForFinal(fault, answer.runId ?? '');
        expect(run).toMatchObject({ status: 'FAILED', error: { code: 'CODE_STEP_MEMORY_LIMIT' } });

        expect(isRunning(workerPid)).toBe(true);
        const next = await postWebhook(fault.url, 'benchmark');
        expect(next.status).toBe(200);
        expect(next.body).toEqual({ result: 6 });
        // One engine (warm), alive: the same one (the isolate was disposed, the process kept) or a new one.
        const enginesAfter = enginesOf(workerPid);
        expect(enginesAfter).toHaveLength(1);
        report('isolate out of memory', {
          memoryLimitMb: MEMORY_MB,
          answeredFailedAfterS: seconds(answer.ms),
          engineKept: enginesAfter[0] === enginesBefore[0],
        });
      });
    }
  });
}
