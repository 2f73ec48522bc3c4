// "One flow starves every other": ten callers of a flow whose code step loops
// forever, then a call of the benchmark flow. Per-flow bounds (FLOW_MAX_CONCURRENT_RUNS,
// FLOW_MAX_QUEUED_RUNS: 429 with retry-after past it, no run created), dispatch by rank within
// each flow (round-robin over flows), and sync runs whose caller left before they started end
// FAILED CALLER_GONE unless their flow says runWhenCallerGone.
import { randomUUID } from 'node:crypto';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manage } from '../../../app/test/app-harness.ts';
import {
  codeFlow,
  type FaultStack,
  HOLD_FLOW,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  tally,
  waitForAllFinal,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const STEP_TIMEOUT_MS = 2_000;
const WEBHOOK_TIMEOUT_S = 8;
const MAX_QUEUED = 4;
/** Holds a worker well past the webhook timeout, so a run behind it cannot start in time. */
const LONG_HOLD_MS = (WEBHOOK_TIMEOUT_S + 4) * 1000;

const FLOWS: Record<string, FlowDefinition> = {
  spins: codeFlow('while (true) {}'),
  hold: HOLD_FLOW,
  'hold-anyway': { ...HOLD_FLOW, runWhenCallerGone: true },
  'hold-bounded': HOLD_FLOW,
};

interface RunSummary {
  id: string;
  status: string;
  attempts: number;
  workerId: string | null;
  error: { code: string } | null;
}

function countBy(keys: string[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const key of keys) counts[key] = (counts[key] ?? 0) + 1;
  return counts;
}

describe('one flow does not starve the others', () => {
  let fault: FaultStack;

  const runsOf = async (flowId: string): Promise<RunSummary[]> => {
    const response = await manage(
      fault.url,
      'GET',
      `/v1/runs?flowId=${flowId}&limit=1000`,
      undefined,
      fault.stack.apiKey,
    );
    return ((await response.json()) as { runs: RunSummary[] }).runs;
  };

  /** An async run of `flowId` that holds its worker for `holdMs`; resolves once it runs. */
  const holdAsync = async (flowId: string, holdMs: number) => {
    const tag = randomUUID();
    const answer = await postWebhook(
      fault.url,
      flowId,
      { url: fault.beacon.urlFor(tag), holdMs },
      { sync: false },
    );
    expect(answer.status).toBe(202);
    await fault.beacon.reached(tag);
    return answer.runId ?? '';
  };

  beforeAll(async () => {
    fault = await startFaultStack({
      workers: 2,
      flows: FLOWS,
      appEnv: {
        CODE_STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS),
        WEBHOOK_TIMEOUT_SECONDS: String(WEBHOOK_TIMEOUT_S),
        FLOW_MAX_CONCURRENT_RUNS: '1',
        FLOW_MAX_QUEUED_RUNS: String(MAX_QUEUED),
      },
      workerEnv: { REUSE_SANDBOX: 'true' },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('answers another flow promptly during a storm of looping runs; what the bound refused created no run', async () => {
    // Both workers warm first (a worker's first run provisions and boots its engine).
    const warmed = new Set<string>();
    for (let i = 0; i < 20 && warmed.size < 2; i += 1) {
      const answer = await postWebhook(fault.url, 'benchmark');
      warmed.add((await fault.getRun(answer.runId ?? '')).workerId ?? '');
    }
    const unloaded: number[] = [];
    for (let i = 0; i < 6; i += 1) {
      const answer = await postWebhook(fault.url, 'benchmark');
      expect(answer.status).toBe(200);
      unloaded.push(answer.ms);
    }

    const stormStarted = performance.now();
    const lastAnswerAt: number[] = [];
    const storm = Array.from({ length: 10 }, () =>
      postWebhook(fault.url, 'spins', {}, { timeoutMs: (WEBHOOK_TIMEOUT_S + 10) * 1000 }).then((answer) => {
        lastAnswerAt.push(performance.now());
        return answer;
      }),
    );
    await waitUntil(
      async () => (await runsOf('spins')).some((run) => run.status === 'RUNNING'),
      10_000,
      'a looping run started',
    );

    const loaded: number[] = [];
    for (let i = 0; i < 5; i += 1) {
      const answer = await postWebhook(fault.url, 'benchmark');
      expect(answer.status).toBe(200);
      expect(answer.body).toEqual({ result: 6 });
      // Before the caller's own timeout (a 504 otherwise): the second worker was free.
      loaded.push(answer.ms);
    }

    const answers = await Promise.all(storm);
    // How many the bound refused depends on how fast the runs before them left the queue (the
    // next test counts exactly); whatever was refused created nothing.
    const refused = answers.filter((answer) => answer.status === 429);
    const accepted = answers.filter((answer) => answer.status !== 429);
    for (const answer of refused) {
      expect(answer.retryAfter).toBe('1');
      expect(answer.runId).toBeNull();
      expect(answer.body).toMatchObject({ error: { code: 'FLOW_QUEUE_FULL' } });
    }
    const acceptedIds = accepted.map((answer) => answer.runId ?? '');
    expect(acceptedIds.every((id) => id !== '')).toBe(true);
    expect((await runsOf('spins')).map((run) => run.id).sort()).toEqual([...acceptedIds].sort());

    // Every accepted run ends: it ran (the step timed out), or its caller left before it started.
    const final = await waitForAllFinal(fault, acceptedIds, 60_000);
    const allFinalAt = performance.now();
    for (const run of final.values()) {
      expect(run.status).toBe('FAILED');
      expect(['CODE_STEP_TIMEOUT', 'CALLER_GONE']).toContain(run.error?.code);
      if (run.error?.code === 'CALLER_GONE') expect(run.attempts).toBe(0);
    }
    const sorted = (values: number[]) => [...values].sort((a, b) => a - b);
    report('looping-flow storm, 2 workers, FLOW_MAX_CONCURRENT_RUNS=1', {
      unloadedMs: sorted(unloaded).map(Math.round),
      duringStormMs: sorted(loaded).map(Math.round),
      stormAnswers: countBy(answers.map((answer) => String(answer.status))),
      runs: tally(final.values()),
      lastCallerAnsweredAfterS: seconds(Math.max(...lastAnswerAt) - stormStarted),
      workBeyondLastCallerS: seconds(Math.max(0, allFinalAt - Math.max(...lastAnswerAt))),
    });
  });

  it("refuses with 429 and retry-after, creating no run, each call past the flow's bound of waiting runs", async () => {
    // The flow's one running run holds its place: every later one waits.
    const holder = await holdAsync('hold-bounded', LONG_HOLD_MS);
    const answers = [];
    for (let i = 0; i < MAX_QUEUED + 2; i += 1) {
      const body = { url: fault.beacon.urlFor(randomUUID()), holdMs: 0 };
      answers.push(await postWebhook(fault.url, 'hold-bounded', body, { sync: false }));
    }
    // The precondition held throughout: nothing of this flow left the queue meanwhile.
    expect((await fault.getRun(holder)).status).toBe('RUNNING');
    expect(answers.map((answer) => answer.status)).toEqual([...Array(MAX_QUEUED).fill(202), 429, 429]);
    for (const answer of answers.slice(MAX_QUEUED)) {
      expect(answer.retryAfter).toBe('1');
      expect(answer.runId).toBeNull();
      expect(answer.body).toMatchObject({ error: { code: 'FLOW_QUEUE_FULL' } });
    }
    const acceptedIds = answers.slice(0, MAX_QUEUED).map((answer) => answer.runId ?? '');
    expect((await runsOf('hold-bounded')).map((run) => run.id).sort()).toEqual(
      [holder, ...acceptedIds].sort(),
    );
    const final = await waitForAllFinal(fault, [holder, ...acceptedIds], LONG_HOLD_MS + 20_000);
    expect(tally(final.values())).toEqual({ SUCCEEDED: MAX_QUEUED + 1 });
  });

  it('ends FAILED CALLER_GONE, without running it, a sync run whose caller was answered 504 before it started', async () => {
    const holder = await holdAsync('hold', LONG_HOLD_MS);
    const tag = randomUUID();
    const answer = await postWebhook(fault.url, 'hold', { url: fault.beacon.urlFor(tag), holdMs: 0 });
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ error: { code: 'WEBHOOK_TIMEOUT', message: /CALLER_GONE/ } });
    const run = await fault.getRun(answer.runId ?? '');
    expect(run).toMatchObject({
      status: 'FAILED',
      error: { code: 'CALLER_GONE' },
      attempts: 0,
      workerId: null,
    });

    // The flow's next run goes through once the holder is done; the dropped one never ran.
    expect((await waitForFinal(fault, holder, LONG_HOLD_MS + 10_000)).status).toBe('SUCCEEDED');
    const next = randomUUID();
    expect((await postWebhook(fault.url, 'hold', { url: fault.beacon.urlFor(next), holdMs: 0 })).status).toBe(
      200,
    );
    await expect(fault.beacon.reached(tag, 1, 1)).rejects.toThrow(/no checkpoint/);
    expect((await fault.getRun(answer.runId ?? '')).attempts).toBe(0);
  });

  it('ends FAILED CALLER_GONE a sync run whose caller disconnected before it started', async () => {
    const holder = await holdAsync('hold', 4_000);
    const before = new Set((await runsOf('hold')).map((run) => run.id));
    const tag = randomUUID();
    await expect(
      postWebhook(fault.url, 'hold', { url: fault.beacon.urlFor(tag), holdMs: 0 }, { timeoutMs: 1_000 }),
    ).rejects.toThrow();
    let gone: RunSummary | undefined;
    await waitUntil(
      async () => {
        gone = (await runsOf('hold')).find((run) => !before.has(run.id));
        return gone?.status === 'FAILED';
      },
      10_000,
      'the run of the caller that left ended',
    );
    expect(gone).toMatchObject({ status: 'FAILED', error: { code: 'CALLER_GONE' }, attempts: 0 });
    expect((await waitForFinal(fault, holder, 20_000)).status).toBe('SUCCEEDED');
  });

  it('runs anyway, after the 504, a sync run whose flow says runWhenCallerGone', async () => {
    const holder = await holdAsync('hold-anyway', LONG_HOLD_MS);
    const tag = randomUUID();
    const answer = await postWebhook(fault.url, 'hold-anyway', { url: fault.beacon.urlFor(tag), holdMs: 0 });
    expect(answer.status).toBe(504);
    expect(answer.body).toMatchObject({ error: { code: 'WEBHOOK_TIMEOUT', message: /goes on/ } });
    expect((await waitForFinal(fault, holder, LONG_HOLD_MS + 10_000)).status).toBe('SUCCEEDED');
    await fault.beacon.reached(tag);
    expect((await waitForFinal(fault, answer.runId ?? '')).status).toBe('SUCCEEDED');
  });
});

// The issue's own setup: one worker, no per-flow bounds. Nothing can keep the looping flow off
// the worker, but the benchmark run waits only for the looping run in progress, not for the
// backlog behind it (first-in-first-out would have it wait for all ten: 504).
describe('one worker: another flow waits for the run in progress, not for the backlog', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      workers: 1,
      flows: { spins: FLOWS.spins as FlowDefinition },
      appEnv: {
        CODE_STEP_TIMEOUT_MS: String(STEP_TIMEOUT_MS),
        WEBHOOK_TIMEOUT_SECONDS: String(WEBHOOK_TIMEOUT_S),
      },
      workerEnv: { REUSE_SANDBOX: 'true' },
    });
  });

  afterAll(async () => {
    await fault?.close();
  });

  it('answers the benchmark flow behind ten looping runs after at most one more of them, and runs no looping run for a caller that left', async () => {
    const unloaded = await postWebhook(fault.url, 'benchmark');
    expect(unloaded.status).toBe(200);
    const storm = Array.from({ length: 10 }, () =>
      postWebhook(fault.url, 'spins', {}, { timeoutMs: (WEBHOOK_TIMEOUT_S + 10) * 1000 }),
    );
    const stormStarted = performance.now();
    const spinsRuns = async () => {
      const response = await manage(
        fault.url,
        'GET',
        '/v1/runs?flowId=spins&limit=100',
        undefined,
        fault.stack.apiKey,
      );
      return ((await response.json()) as { runs: RunSummary[] }).runs;
    };
    await waitUntil(async () => (await spinsRuns()).length === 10, 10_000, 'ten looping runs accepted');
    const behind = await postWebhook(fault.url, 'benchmark');
    // Ten looping runs take ten step timeouts, longer than the webhook timeout: behind all of
    // them (first in, first out) this caller would get a 504.
    expect(behind.status).toBe(200);

    const answers = await Promise.all(storm);
    const lastAnswer = performance.now();
    const final = await waitForAllFinal(
      fault,
      answers.map((answer) => answer.runId ?? ''),
      60_000,
    );
    const ran = [...final.values()].filter((run) => run.error?.code === 'CODE_STEP_TIMEOUT').length;
    // Callers leave at the webhook timeout: the runs not started by then never run.
    expect(ran).toBeLessThan(10);
    // Order, not time: once it was accepted, it waited for the looping run in progress, not for
    // the backlog: no looping run started between its acceptance and its start (one, if the
    // worker was being handed its next job at the very moment it was accepted).
    const benchmarkRun = await fault.getRun(behind.runId ?? '');
    const { createdAt } = benchmarkRun;
    const startedAt = benchmarkRun.startedAt ?? '';
    expect(startedAt).not.toBe('');
    const startedWhileItWaited = [...final.values()].filter(
      (run) => run.startedAt !== null && run.startedAt > createdAt && run.startedAt < startedAt,
    ).length;
    expect(startedWhileItWaited).toBeLessThanOrEqual(1);
    report('looping-flow storm, 1 worker, no per-flow bounds', {
      unloadedMs: Math.round(unloaded.ms),
      behindTenLoopingRunsMs: Math.round(behind.ms),
      loopingRunsStartedWhileItWaited: startedWhileItWaited,
      stormAnswers: countBy(answers.map((answer) => String(answer.status))),
      runs: tally(final.values()),
      workBeyondLastCallerS: seconds(Math.max(0, performance.now() - lastAnswer)),
      stormS: seconds(lastAnswer - stormStarted),
    });
  });
});
