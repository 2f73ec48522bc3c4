// A rolling restart drops nothing. SIGTERM to an app that serves keep-alive
// callers under load: it reports not ready at once and goes on serving for
// SHUTDOWN_DRAIN_SECONDS, answering with `connection: close`, while a load balancer (here the
// test, probing /health/ready as one would) moves the callers to the other app; then it answers
// its waiting sync callers and exits 0. No caller sees a 503 or a connection closed under it.
import { setTimeout as delay } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultStack,
  report,
  seconds,
  startFaultStack,
  startLoad,
  tally,
  waitForAllFinal,
  waitUntil,
} from './fault-harness.ts';

const DRAIN_SECONDS = 3;
const GRACE_SECONDS = 6;
const CALLERS = 8;
/** How often the test's load balancer probes readiness (a real one: every few seconds). */
const PROBE_MS = 250;

describe('SIGTERM to an app under keep-alive load', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    // Both workers on the app that stays: the stopping app only takes webhooks and holds callers.
    fault = await startFaultStack({
      apps: 2,
      workers: 2,
      workerTargets: [0, 0],
      appEnv: {
        SHUTDOWN_DRAIN_SECONDS: String(DRAIN_SECONDS),
        SHUTDOWN_GRACE_SECONDS: String(GRACE_SECONDS),
      },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('drops no caller: every request answered with its run, every run final, exit 0', async () => {
    const [staying, stopping] = fault.stack.appUrls as [string, string];
    const app = fault.stack.apps[1];
    if (app === undefined) throw new Error('stack without a second app');
    // The balancer: the stopping app while it says ready, the other one from then on.
    let target = stopping;
    let probing = true;
    const prober = (async () => {
      while (probing && target === stopping) {
        const ready = await fetch(`${stopping}/health/ready`).then(
          (r) => r.status === 200,
          () => false,
        );
        if (!ready) target = staying;
        else await delay(PROBE_MS);
      }
    })();
    const load = startLoad({
      url: () => target,
      flowId: 'benchmark',
      concurrency: CALLERS,
      sync: true,
      requestTimeoutMs: 30_000,
    });
    let exit: { code: number | null; ms: number } | undefined;
    try {
      await waitUntil(() => load.result.answers.length >= 50, 60_000, '50 answers before the SIGTERM');
      const sent = performance.now();
      process.kill(app.pid ?? 0, 'SIGTERM');
      const { code } = await app.exited;
      exit = { code, ms: performance.now() - sent };
      const answered = load.result.answers.length;
      await waitUntil(() => load.result.answers.length >= answered + 50, 60_000, '50 answers after the exit');
    } finally {
      probing = false;
      await load.stop();
      await prober;
    }
    const { answers, failures } = load.result;
    // Nobody dropped: no request failed (a closed socket, a refused connection), no 503.
    expect(failures).toEqual([]);
    expect(answers.filter((a) => a.status !== 200)).toEqual([]);
    expect(exit?.code).toBe(0);
    expect(exit?.ms).toBeLessThanOrEqual((DRAIN_SECONDS + GRACE_SECONDS) * 1000);
    expect(target).toBe(staying);
    const runs = await waitForAllFinal(
      fault,
      answers.map((a) => a.runId ?? ''),
      60_000,
    );
    expect(tally(runs.values())).toEqual({ SUCCEEDED: answers.length });
    report('SIGTERM app under keep-alive load', {
      callers: CALLERS,
      drainS: DRAIN_SECONDS,
      exitCode: exit?.code,
      exitAfterS: seconds(exit?.ms ?? Number.NaN),
      answered: answers.length,
      dropped: failures.length,
    });
  }, 180_000);
});
