// Fault-injection row "Redis restarted" (stop redis-server for 10 s under load, then start it):
// webhooks get a clear 503 while it is down, never a hang; workers resume on their own within
// 30 s; no accepted run is lost. The stack has its own redis-server (append-only, as a
// production Redis keeps its data across a restart); the shared one is never stopped.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type FaultStack,
  isRunning,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  startLoad,
  tally,
  type WebhookAnswer,
  waitForAllFinal,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

/** Longest any webhook may take to answer, up or down: past it the request counts as a hang. */
const ANSWER_DEADLINE_MS = 5_000;
const RESUME_DEADLINE_MS = 30_000;
/** How long Redis stays down (the case: 10 s under load). */
const OUTAGE_MS = 10_000;

describe('Redis stopped and started again under load', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ redis: 'private', workers: 2 });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('answers 503 while Redis is down, resumes on its own, and loses no accepted run', async () => {
    const redis = fault.redis;
    if (redis === undefined) throw new Error('the stack has no private Redis');
    const workerPids = fault.stack.workers.map((w) => w.pid);
    type Phase = 'before' | 'down' | 'after';
    let phase = 'before' as Phase;
    const byPhase: Record<Phase, WebhookAnswer[]> = { before: [], down: [], after: [] };
    const load = startLoad({
      url: fault.url,
      flowId: 'benchmark',
      concurrency: 3,
      requestTimeoutMs: ANSWER_DEADLINE_MS,
      onAnswer: (answer) => byPhase[phase].push(answer),
    });
    try {
      await waitUntil(
        () => byPhase.before.filter((a) => a.status === 202).length >= 20,
        30_000,
        '20 runs accepted',
      );

      phase = 'down';
      const stopped = performance.now();
      await redis.stop();
      // Down long enough for every part to notice: webhooks refused, the app's job fetching failing.
      await waitUntil(
        () => byPhase.down.filter((a) => a.status === 503).length >= 30,
        20_000,
        '503s while down',
      );
      const outageLines = (pattern: RegExp) =>
        fault.lines.filter((l) => l.name.startsWith('app') && pattern.test(l.line.raw));
      await waitUntil(
        () => outageLines(/redis is unavailable/).length > 0,
        20_000,
        'the app noticed Redis is gone',
      );
      // Sync callers too: a clear 503 at once, not a wait for a queue that is gone.
      const syncWhileDown = await postWebhook(fault.url, 'benchmark', {}, { timeoutMs: ANSWER_DEADLINE_MS });
      const health = await fetch(`${fault.url}/health/ready`, {
        signal: AbortSignal.timeout(ANSWER_DEADLINE_MS),
      });
      expect(health.status).toBe(503);
      // The outage lasts OUTAGE_MS under load, not just until it is noticed: the retries of
      // every part go on meanwhile, and must neither flood the log nor give up.
      const heldMs = OUTAGE_MS - (performance.now() - stopped);
      if (heldMs > 0) await new Promise((resolve) => setTimeout(resolve, heldMs));

      phase = 'after';
      await redis.start();
      const restarted = performance.now();
      // Recovered: a run accepted after the restart has been run by a worker to the end.
      let firstRecovered: number | undefined;
      await waitUntil(
        async () => {
          const accepted = byPhase.after.find((a) => a.status === 202);
          if (accepted?.runId == null) return false;
          const run = await fault.getRun(accepted.runId);
          if (run.status !== 'SUCCEEDED') return false;
          firstRecovered ??= performance.now();
          return true;
        },
        RESUME_DEADLINE_MS,
        'a run accepted after the restart succeeded',
      );
      await waitUntil(
        () => byPhase.after.filter((a) => a.status === 202).length >= 20,
        30_000,
        '20 more accepted',
      );
      const { failures } = await load.stop();

      // Never a hang, never anything but accepted or a clear 503.
      expect(failures).toEqual([]);
      const all = [...byPhase.before, ...byPhase.down, ...byPhase.after];
      for (const answer of all) expect([202, 503]).toContain(answer.status);
      const refused = [...all.filter((a) => a.status === 503), syncWhileDown];
      expect(syncWhileDown.status).toBe(503);
      // Each 503 names the run it created and could not enqueue, however long the outage: the
      // admission bound does not count those runs as queued (they would fill it with nothing).
      for (const answer of refused) {
        expect(answer.body, JSON.stringify(answer.body)).toMatchObject({
          error: { code: 'QUEUE_UNAVAILABLE' },
        });
        expect(answer.runId).toMatch(/^[0-9a-f-]{36}$/);
        expect(answer.ms).toBeLessThan(ANSWER_DEADLINE_MS);
      }

      // No accepted run lost: every 202 ends SUCCEEDED; every 503 ends INTERNAL_ERROR, readable.
      const accepted = all.filter((a) => a.status === 202).map((a) => a.runId ?? '');
      const acceptedRuns = await waitForAllFinal(fault, accepted, 60_000);
      expect(tally(acceptedRuns.values())).toEqual({ SUCCEEDED: accepted.length });
      for (const answer of refused) {
        expect(await waitForFinal(fault, answer.runId ?? '')).toMatchObject({
          status: 'INTERNAL_ERROR',
          error: { code: 'QUEUE_UNAVAILABLE' },
        });
      }
      // The same worker processes resumed: nobody restarted them.
      for (const pid of workerPids) expect(isRunning(pid)).toBe(true);
      expect((await fetch(`${fault.url}/health/ready`)).status).toBe(200);
      // The outage was told once when it began and once when it ended, with its length; not
      // per reconnect attempt, refused webhook or failed fetch.
      expect(outageLines(/redis is unavailable/)).toHaveLength(1);
      const back = outageLines(/redis is available again/);
      expect(back).toHaveLength(1);
      expect(Number(back[0]?.line.json?.downForMs)).toBeGreaterThan(0);
      expect(outageLines(/redis connection error|could not fetch a job|request failed/)).toEqual([]);

      report('Redis restart', {
        downForS: seconds(restarted - stopped),
        resumedAfterRestartS: seconds((firstRecovered ?? Number.NaN) - restarted),
        accepted: accepted.length,
        refused503: refused.length,
        slowest503Ms: Math.round(Math.max(...refused.map((a) => a.ms))),
        runsLost: accepted.length - [...acceptedRuns.values()].filter((r) => r.status === 'SUCCEEDED').length,
      });
    } finally {
      await load.stop();
    }
  }, 120_000);
});
