// Durable runs under faults, against real apps, workers and engines: a worker SIGKILLed in the
// middle of a resumed run, or right after its run paused; one wait URL called on two apps at
// once; the wait URL of a run that retention deleted. Each step of the flows calls a loopback
// server that counts its calls per path (and can hold one until the test releases it), so what
// ran twice is counted, never guessed from timing.
import { EventEmitter, once } from 'node:events';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { queryRows } from '../../../../packages/local-services/src/index.ts';
import { createPool } from '../../../app/src/db/pool.ts';
import { queryRetentionBatch, removeRuns } from '../../../app/src/runs/run-retention-queries.ts';
import {
  type FaultStack,
  ownerOfLocalPort,
  parentOf,
  postWebhook,
  report,
  seconds,
  startFaultStack,
  waitForFinal,
  waitUntil,
} from './fault-harness.ts';

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} };
const PAUSE_ENV = { PAUSE_MIN_MS: '500', RECONCILE_AFTER_SECONDS: '2' };

/** An http piece step POSTing `{}` to the step server's `/<name>`. */
const call = (name: string) => ({
  type: 'piece',
  name,
  piece: 'http',
  action: 'send_request',
  input: {
    method: 'POST',
    url: `{{trigger.body.url}}/${name}`,
    headers: {},
    query: {},
    bodyType: 'json',
    body: {},
    timeoutMs: 60_000,
    responseType: 'json',
  },
});
const respond = (body: unknown) => ({
  type: 'piece',
  name: 'respond',
  piece: 'webhook',
  action: 'return_response',
  input: { status: 200, headers: {}, body },
});

/** `before → delay 1 s (a pause) → held → respond`: `held` is the step a test holds. */
const RESUMED_FLOW = {
  trigger: TRIGGER,
  steps: [
    call('before'),
    { type: 'delay', name: 'later', for: '1s' },
    call('held'),
    respond('{{held.body}}'),
  ],
} as unknown as FlowDefinition;

/** `before → delay (the body's wait) → after → respond`. */
const DELAYED_FLOW = {
  trigger: TRIGGER,
  steps: [
    call('before'),
    { type: 'delay', name: 'later', for: '{{trigger.body.wait}}' },
    call('after'),
    respond('{{after.body}}'),
  ],
} as unknown as FlowDefinition;

/** `urls (its resume URL as output) → wait for a request → respond with its body`. */
const WAIT_FLOW = {
  trigger: TRIGGER,
  steps: [
    {
      type: 'code',
      name: 'urls',
      code: 'return { resumeUrl: inputs.resumeUrl };',
      input: { resumeUrl: '{{waits.reply.resumeUrl}}' },
    },
    { type: 'wait', name: 'reply', kind: 'request' },
    respond('{{reply.body}}'),
  ],
} as unknown as FlowDefinition;

interface StepServer {
  url: string;
  port: number;
  /** Calls so far, by step (the path's last segment). */
  count(step: string): number;
  /** Resolves with the caller's port when `step` has been called `n` times (also if it was). */
  reached(step: string, n: number): Promise<number>;
  /** Holds every call of `step` from now on until `release`. */
  hold(step: string): void;
  release(step: string): void;
  close(): Promise<void>;
}

async function startStepServer(): Promise<StepServer> {
  const counts = new Map<string, number>();
  const ports = new Map<string, number[]>();
  const holding = new Map<string, ServerResponse[]>();
  const events = new EventEmitter();
  const answer = (response: ServerResponse, step: string) => {
    if (!response.destroyed) {
      response.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ step }));
    }
  };
  const server = createServer((request, response) => {
    const step = (request.url ?? '/').split('/').at(-1) ?? '';
    request.resume();
    request.on('end', () => {
      counts.set(step, (counts.get(step) ?? 0) + 1);
      ports.set(step, [...(ports.get(step) ?? []), request.socket.remotePort ?? 0]);
      const held = holding.get(step);
      if (held === undefined) answer(response, step);
      else held.push(response);
      events.emit('call', step);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  const count = (step: string) => counts.get(step) ?? 0;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    count,
    async reached(step, n) {
      while (count(step) < n) await once(events, 'call');
      return ports.get(step)?.[n - 1] ?? 0;
    },
    hold: (step) => void holding.set(step, holding.get(step) ?? []),
    release(step) {
      const held = holding.get(step) ?? [];
      holding.delete(step);
      for (const response of held) answer(response, step);
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The worker process whose engine holds the local `port` (an ancestor of the port's owner). */
function workerOfPort(fault: FaultStack, port: number) {
  const workers = new Map(fault.stack.workers.map((worker) => [worker.pid, worker]));
  for (let pid = ownerOfLocalPort(port); pid !== null; pid = parentOf(pid)) {
    const worker = workers.get(pid);
    if (worker !== undefined) return worker;
  }
  throw new Error(`no worker of this stack holds port ${port}`);
}

async function waitForStatus(fault: FaultStack, runId: string, status: string, deadlineMs = 30_000) {
  await waitUntil(
    async () => (await fault.getRun(runId)).status === status,
    deadlineMs,
    `run ${runId} ${status}`,
  );
}

const succeeded = (run: { steps: Array<{ name: string; status: string; replayed?: boolean }> }) =>
  run.steps.filter((step) => step.status === 'SUCCEEDED').map((step) => step.name);

describe('workers SIGKILLed around a pause', () => {
  let fault: FaultStack;
  let steps: StepServer;

  beforeAll(async () => {
    steps = await startStepServer();
    fault = await startFaultStack({
      // Each test kills one: a worker is left for the last.
      workers: 3,
      flows: { resumed: RESUMED_FLOW, delayed: DELAYED_FLOW },
      appEnv: { ...PAUSE_ENV, RUN_MAX_ATTEMPTS: '2' },
      workerEnv: { EGRESS: `public,127.0.0.1:${steps.port}` },
    });
  });
  afterAll(async () => {
    await fault?.close();
    await steps?.close();
  });

  it('a worker SIGKILLed in the middle of a resumed run: retried as a first attempt would be, nothing before the pause runs again', async () => {
    steps.hold('held');
    const started = await postWebhook(fault.url, 'resumed', { url: steps.url }, { sync: false });
    expect(started.status).toBe(202);
    const runId = started.runId ?? '';
    // The resumed attempt is in `held`, on some worker: that worker dies.
    const port = await steps.reached('held', 1);
    const running = await fault.getRun(runId);
    expect(running).toMatchObject({ status: 'RUNNING', resumes: 1, attempts: 1 });
    const victim = workerOfPort(fault, port);
    await victim.stop('SIGKILL');
    const killedAt = performance.now();
    // The retry (the resume's second attempt) reaches `held` again, on the worker left.
    await steps.reached('held', 2);
    steps.release('held');
    const done = await waitForFinal(fault, runId, 60_000);
    expect(done, JSON.stringify(done.error)).toMatchObject({ status: 'SUCCEEDED', resumes: 1, attempts: 2 });
    expect(succeeded(done)).toEqual(['trigger', 'before', 'later', 'held', 'respond']);
    // `before` succeeded before the pause: called once, replayed by both resumed attempts.
    expect(steps.count('before')).toBe(1);
    expect(done.steps.find((step) => step.name === 'before')).toMatchObject({ replayed: true });
    // `held` ran after the last checkpoint: at least once (here twice: the killed attempt's call).
    expect(steps.count('held')).toBe(2);
    report('worker SIGKILLed in a resumed run', {
      calls: { before: steps.count('before'), held: steps.count('held') },
      finalAfterKillS: seconds(performance.now() - killedAt),
    });
  }, 120_000);

  it('a worker SIGKILLed right after its run paused: the run resumes once, on a worker left', async () => {
    const [before, after] = [steps.count('before'), steps.count('after')];
    const started = await postWebhook(fault.url, 'delayed', { url: steps.url, wait: '3s' }, { sync: false });
    expect(started.status).toBe(202);
    const runId = started.runId ?? '';
    const port = await steps.reached('before', before + 1);
    const worker = workerOfPort(fault, port);
    // The pause is recorded (its worker reported it); then that worker dies.
    await waitForStatus(fault, runId, 'PAUSED');
    await worker.stop('SIGKILL');
    const killedAt = performance.now();
    const done = await waitForFinal(fault, runId, 60_000);
    expect(done, JSON.stringify(done.error)).toMatchObject({ status: 'SUCCEEDED', resumes: 1, attempts: 1 });
    expect(succeeded(done)).toEqual(['trigger', 'before', 'later', 'after', 'respond']);
    expect(steps.count('before')).toBe(before + 1);
    expect(steps.count('after')).toBe(after + 1);
    const [row] = await queryRows<{ resumes: number }>(
      fault.databaseUrl,
      'SELECT resumes FROM runs WHERE id = $1',
      [runId],
    );
    expect(row).toEqual({ resumes: 1 });
    report('worker SIGKILLed right after its run paused', {
      calls: { before: steps.count('before') - before, after: steps.count('after') - after },
      finalAfterKillS: seconds(performance.now() - killedAt),
    });
  }, 120_000);
});

describe('wait URLs on two apps', () => {
  let fault: FaultStack;

  beforeAll(async () => {
    fault = await startFaultStack({ apps: 2, workers: 1, flows: { waits: WAIT_FLOW }, appEnv: PAUSE_ENV });
  });
  afterAll(async () => {
    await fault?.close();
  });

  /** A run paused at its wait, and its resume URL on each app. */
  async function pausedRun(): Promise<{ runId: string; urls: string[] }> {
    const started = await postWebhook(fault.url, 'waits', {}, { sync: false });
    expect(started.status).toBe(202);
    const runId = started.runId ?? '';
    await waitForStatus(fault, runId, 'PAUSED');
    const run = await fault.getRun(runId);
    const output = run.steps.find((step) => step.name === 'urls')?.output as
      | { resumeUrl: string }
      | undefined;
    const resumeUrl = output?.resumeUrl ?? '';
    const { pathname } = new URL(resumeUrl);
    return { runId, urls: fault.stack.appUrls.map((app) => `${app}${pathname}`) };
  }

  it('two concurrent calls of one wait URL on two apps: one 202, one 409 naming the run, one resume', async () => {
    const { runId, urls } = await pausedRun();
    expect(urls).toHaveLength(2);
    const answers = await Promise.all(
      urls.map(async (url, n) => {
        const response = await fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ from: n }),
        });
        return { status: response.status, body: (await response.json()) as Record<string, unknown> };
      }),
    );
    const statuses = answers.map((answer) => answer.status).sort();
    expect(statuses).toEqual([202, 409]);
    const accepted = answers.find((answer) => answer.status === 202);
    const refused = answers.find((answer) => answer.status === 409);
    expect(accepted?.body).toMatchObject({ runId, resumed: true });
    expect(refused?.body).toMatchObject({ error: { code: 'WAIT_ALREADY_RESUMED' } });
    expect(JSON.stringify(refused?.body)).toContain(runId);
    const done = await waitForFinal(fault, runId, 60_000);
    expect(done).toMatchObject({ status: 'SUCCEEDED', resumes: 1 });
    // The run took the answer that was accepted.
    const from = answers.indexOf(accepted as (typeof answers)[number]);
    expect(done.steps.find((step) => step.name === 'reply')?.output).toMatchObject({ body: { from } });
    report('one wait URL called on two apps at once', { statuses, resumes: done.resumes });
  }, 60_000);

  it('the wait URL of a run that retention deleted: 404', async () => {
    const { runId, urls } = await pausedRun();
    const url = urls[1] ?? '';
    expect((await fetch(url, { method: 'POST' })).status).toBe(202);
    await waitForFinal(fault, runId, 60_000);
    expect((await fetch(url)).status).toBe(410);
    // Past RUN_RETENTION_DAYS (30): retention's own batch finds it and deletes it.
    await queryRows(
      fault.databaseUrl,
      "UPDATE runs SET created_at = now() - interval '31 days' WHERE id = $1",
      [runId],
    );
    const pool = createPool(fault.databaseUrl, 1);
    try {
      const batch = await queryRetentionBatch(pool, 30, 100);
      expect(batch.runs.map((run) => run.id)).toContain(runId);
      expect(await removeRuns(pool, [runId])).toBe(1);
    } finally {
      await pool.end();
    }
    for (const app of urls) {
      const response = await fetch(app, { method: 'POST' });
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ error: { code: 'RUN_NOT_FOUND' } });
    }
  }, 60_000);
});
