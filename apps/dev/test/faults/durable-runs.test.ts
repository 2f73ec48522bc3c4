// A run that waits frees its worker. A `delay` past PAUSE_MIN_MS pauses the run (PAUSED, its
// checkpoint in S3, its waits in Postgres), its worker takes the next job, and its resume job,
// delayed to the wait's time, resumes it on any worker; the resume replays what ran and goes on.
// Redis is transport only: a resume job it loses is made again by the reconciler from run_waits,
// and a run resumes once whoever resumes it.
import { createLogger } from '@flowbox/node-kit';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../packages/local-services/src/index.ts';
import { manage } from '../../../app/test/app-harness.ts';
import { DEFAULT_RESTART_POLICY } from '../../src/restart-policy.ts';
import {
  type FaultStack,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  tally,
  waitForAllFinal,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };

/** `code → delay (the body's `wait`) → code → response`; `tag` names the version in the answer. */
function delayedFlow(tag: string): FlowDefinition {
  return {
    trigger: TRIGGER,
    steps: [
      { type: 'code', name: 'before', code: 'return { n: inputs.n };', input: { n: '{{trigger.body.n}}' } },
      { type: 'delay', name: 'later', for: '{{trigger.body.wait}}' },
      {
        type: 'code',
        name: 'after',
        code: `return { n: inputs.n + 1, tag: ${JSON.stringify(tag)} };`,
        input: { n: '{{before.n}}' },
      },
      {
        type: 'piece',
        name: 'respond',
        piece: 'webhook',
        action: 'return_response',
        input: { status: 200, headers: {}, body: '{{after}}' },
      },
    ],
  } as unknown as FlowDefinition;
}
const QUICK_FLOW = {
  trigger: TRIGGER,
  steps: [
    {
      type: 'piece',
      name: 'respond',
      piece: 'webhook',
      action: 'return_response',
      input: { status: 200, headers: {}, body: { quick: true } },
    },
  ],
} as unknown as FlowDefinition;

const PAUSE_ENV = { PAUSE_MIN_MS: '500', RECONCILE_AFTER_SECONDS: '2' };

async function waitForStatus(fault: FaultStack, runId: string, status: string, deadlineMs = 30_000) {
  await waitUntil(
    async () => (await fault.getRun(runId)).status === status,
    deadlineMs,
    `run ${runId} ${status}`,
  );
}

/** The `later` delay step's output: `{ scheduledFor, resumedAt, lateMs }`. */
function delayOutput(run: { steps: Array<{ name: string; output?: unknown }> }) {
  const output = run.steps.find((step) => step.name === 'later')?.output;
  if (output === undefined) throw new Error('the delay step has no output');
  return output as { scheduledFor: string; resumedAt: string; lateMs: number };
}

const stepNames = (run: { steps: Array<{ name: string; status: string }> }) =>
  run.steps.filter((step) => step.status === 'SUCCEEDED').map((step) => step.name);

describe('a delayed run with one worker', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      workers: 1,
      flows: { delayed: delayedFlow('v1'), quick: QUICK_FLOW },
      appEnv: PAUSE_ENV,
    });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('pauses, leaves its worker to other runs meanwhile, and resumes to the end', async () => {
    const started = await postWebhook(fault.url, 'delayed', { n: 1, wait: '6s' }, { sync: false });
    expect(started.status).toBe(202);
    const runId = started.runId ?? '';
    await waitForStatus(fault, runId, 'PAUSED');
    const paused = await fault.getRun(runId);
    expect(paused).toMatchObject({
      status: 'PAUSED',
      workerId: null,
      resumes: 0,
      pausedAt: expect.any(String),
    });
    expect(paused.steps.map((step) => [step.name, step.status])).toEqual(
      expect.arrayContaining([
        ['before', 'SUCCEEDED'],
        ['later', 'WAITING'],
      ]),
    );
    expect(paused.waits).toEqual([
      expect.objectContaining({
        path: 'later',
        kind: 'delay',
        answered: false,
        resumeAt: expect.any(String),
      }),
    ]);
    const listed = await manage(fault.url, 'GET', '/v1/runs?status=PAUSED', undefined, fault.stack.apiKey);
    expect(((await listed.json()) as { runs: Array<{ id: string }> }).runs.map((run) => run.id)).toContain(
      runId,
    );

    // The one worker is free: a sync run is answered while the first one waits.
    const quick = await postWebhook(fault.url, 'quick', {}, { sync: true });
    expect(quick).toMatchObject({ status: 200, body: { quick: true } });
    const quickRun = await waitForFinal(fault, quick.runId ?? '');

    const done = await waitForFinal(fault, runId);
    expect(done).toMatchObject({ status: 'SUCCEEDED', resumes: 1, error: null, pausedAt: null, waits: [] });
    expect(stepNames(done)).toEqual(['trigger', 'before', 'later', 'after', 'respond']);
    const later = delayOutput(done);
    expect(later).toMatchObject({ scheduledFor: expect.any(String), lateMs: expect.any(Number) });
    // The quick run ended before the first one resumed: the worker ran it during the pause (one
    // worker held by the paused run could only have run it after).
    expect(Date.parse(quickRun.finishedAt ?? '')).toBeLessThan(Date.parse(later.resumedAt));
    // The step before the pause ran once: the resume replayed it.
    expect(done.steps.find((step) => step.name === 'before')).toMatchObject({ replayed: true });
  }, 60_000);

  it('answers a sync caller waiting across a short pause', async () => {
    const answer = await postWebhook(fault.url, 'delayed', { n: 41, wait: '1s' }, { sync: true });
    expect(answer).toMatchObject({ status: 200, body: { n: 42, tag: 'v1' } });
    const run = await waitForFinal(fault, answer.runId ?? '');
    expect(run).toMatchObject({ status: 'SUCCEEDED', resumes: 1 });
  }, 60_000);

  it('keeps a paused run on its version when a new one is published', async () => {
    const started = await postWebhook(fault.url, 'delayed', { n: 1, wait: '6s' }, { sync: false });
    const runId = started.runId ?? '';
    await waitForStatus(fault, runId, 'PAUSED');
    const before = await fault.getRun(runId);
    const published = await manage(
      fault.url,
      'POST',
      '/v1/flows/delayed/versions',
      { definition: delayedFlow('v2'), publish: true },
      fault.stack.apiKey,
    );
    expect(published.status).toBe(201);
    const publishedAt = Date.parse(
      ((await published.json()) as { version: { publishedAt: string } }).version.publishedAt,
    );
    const done = await waitForFinal(fault, runId);
    // Published while the run was paused, and the resume ran the version the run had.
    expect(publishedAt).toBeLessThan(Date.parse(delayOutput(done).resumedAt));
    expect(done).toMatchObject({ status: 'SUCCEEDED', flowVersionId: before.flowVersionId });
    expect(done.steps.find((step) => step.name === 'after')?.output).toEqual({ n: 2, tag: 'v1' });
    const next = await postWebhook(fault.url, 'delayed', { n: 1, wait: '1s' }, { sync: true });
    expect(next.body).toEqual({ n: 2, tag: 'v2' });
  }, 60_000);
});

describe('a delayed run on a SANDBOXED worker', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      workers: 1,
      flows: { delayed: delayedFlow('v1') },
      appEnv: PAUSE_ENV,
      workerEnv: { EXECUTION_MODE: 'SANDBOXED' },
    });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('writes and reads its checkpoint through the relay, and resumes to the end', async () => {
    const answer = await postWebhook(fault.url, 'delayed', { n: 6, wait: '1s' }, { sync: true });
    expect(answer).toMatchObject({ status: 200, body: { n: 7, tag: 'v1' } });
    const run = await waitForFinal(fault, answer.runId ?? '');
    expect(run).toMatchObject({ status: 'SUCCEEDED', resumes: 1 });
    expect(run.steps.find((step) => step.name === 'before')).toMatchObject({ replayed: true });
  }, 60_000);
});

describe('paused runs while their app restarts', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({
      workers: 1,
      flows: { delayed: delayedFlow('v1') },
      appEnv: PAUSE_ENV,
      supervise: {
        policy: DEFAULT_RESTART_POLICY,
        logger: createLogger({ name: 'supervisor', level: 'silent' }),
        onGiveUp: () => {},
      },
    });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('resume once each after the app is killed and started again', async () => {
    const runIds: string[] = [];
    for (let n = 0; n < 5; n++) {
      const started = await postWebhook(fault.url, 'delayed', { n, wait: '5s' }, { sync: false });
      expect(started.status).toBe(202);
      runIds.push(started.runId ?? '');
    }
    for (const runId of runIds) await waitForStatus(fault, runId, 'PAUSED');
    const app = fault.stack.apps[0];
    if (app === undefined) throw new Error('no app');
    await app.stop('SIGKILL');
    // Started again by its supervisor, on the same port.
    await waitUntil(
      async () => (await fetch(`${fault.url}/health/ready`).catch(() => null))?.status === 200,
      30_000,
      'the app ready again',
    );
    const runs = await waitForAllFinal(fault, runIds, 60_000);
    expect(tally(runs.values())).toEqual({ SUCCEEDED: runIds.length });
    for (const run of runs.values()) {
      expect(run).toMatchObject({ resumes: 1 });
      expect(stepNames(run)).toEqual(['trigger', 'before', 'later', 'after', 'respond']);
    }
  }, 120_000);
});

describe('Redis restarted empty while 100 runs are delayed', () => {
  let fault: FaultStack;
  const RUNS = 100;

  beforeAll(async () => {
    fault = await startFaultStack({
      redis: 'private',
      redisAppendOnly: false,
      workers: 2,
      flows: { delayed: delayedFlow('v1') },
      appEnv: PAUSE_ENV,
    });
  });
  afterAll(async () => {
    await fault?.close();
  });

  it('resumes every run exactly once, from the reconciler', async () => {
    const redis = fault.redis;
    if (redis === undefined) throw new Error('the stack has no private Redis');
    const runIds: string[] = [];
    for (let n = 0; n < RUNS; n++) {
      // Far enough out that every run has paused before its delayed resume job is lost.
      const started = await postWebhook(fault.url, 'delayed', { n, wait: '30s' }, { sync: false });
      expect(started.status).toBe(202);
      runIds.push(started.runId ?? '');
    }
    // Every run has paused (or, on a slow machine, already resumed from its delayed job).
    const open = async () =>
      (
        await queryRows<{ n: number }>(
          fault.databaseUrl,
          "SELECT count(*)::int AS n FROM runs WHERE flow_id = 'delayed' AND status IN ('QUEUED', 'RUNNING')",
        )
      )[0]?.n ?? 0;
    await waitUntil(async () => (await open()) === 0, 90_000, 'no run QUEUED or RUNNING');
    // Gone with the delayed resume jobs, and started again empty.
    await redis.stop('SIGKILL');
    const killedAt = performance.now();
    // Nothing resumes while Redis is down: the runs paused now are the ones whose resume job was lost.
    const pausedAtKill = (
      await queryRows<{ id: string }>(
        fault.databaseUrl,
        "SELECT id FROM runs WHERE flow_id = 'delayed' AND status = 'PAUSED' ORDER BY id",
      )
    ).map((row) => row.id);
    expect(pausedAtKill.length).toBeGreaterThan(0);
    await redis.start();

    const runs = await waitForAllFinal(fault, runIds, 90_000);
    expect(tally(runs.values())).toEqual({ SUCCEEDED: RUNS });
    const rows = await queryRows<{ resumes: number; n: number }>(
      fault.databaseUrl,
      "SELECT resumes, count(*)::int AS n FROM runs WHERE flow_id = 'delayed' GROUP BY resumes",
    );
    expect(rows).toEqual([{ resumes: 1, n: RUNS }]);
    for (const run of runs.values()) {
      expect(stepNames(run)).toEqual(['trigger', 'before', 'later', 'after', 'respond']);
    }
    const resumedByReconciler = fault.lines.filter(
      (l) => l.line.json?.msg === 'resumed a PAUSED run past its time: its delayed resume job was lost',
    );
    const resumedIds = resumedByReconciler.map((l) => String(l.line.json?.runId));
    expect(new Set(resumedIds).size).toBe(resumedIds.length);
    expect([...resumedIds].sort()).toEqual(pausedAtKill);
    report('Redis restarted empty under 100 paused runs', {
      pausedAtKill: pausedAtKill.length,
      resumedByReconciler: resumedIds.length,
      allFinalAfterKillS: seconds(performance.now() - killedAt),
      lateMsMax: Math.max(...[...runs.values()].map((run) => delayOutput(run).lateMs)),
    });
  }, 240_000);
});
