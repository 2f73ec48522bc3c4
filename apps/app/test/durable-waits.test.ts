import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { FlowDefinition } from '@flowbox/protocol';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { createTestBucket, createTestDatabase, testNamespace } from '../../../test/fixtures.ts';
import { waitUntil } from '../../../test/wait.ts';
import { type RunningStack, startStack } from '../../dev/src/stack.ts';
import { getRun, manage, postJson, type RunView, waitForFinalRun } from './app-harness.ts';

const TRIGGER = { name: 'trigger', piece: 'webhook', trigger: 'catch_webhook', input: {} } as const;
const respond = (body: unknown, status = 200) =>
  ({
    type: 'piece',
    name: 'reply',
    piece: 'webhook',
    action: 'return_response',
    input: { status, headers: {}, body },
  }) as const;

/** An approval: a step before the wait reads its URLs (as it would send them in an email). */
const APPROVAL: FlowDefinition = {
  trigger: TRIGGER,
  steps: [
    {
      type: 'code',
      name: 'ask',
      code: 'return inputs;',
      input: { approve: '{{waits.approval.approveUrl}}', reject: '{{waits.approval.rejectUrl}}' },
    },
    { type: 'wait', name: 'approval', kind: 'approval', timeout: '1h' },
    {
      type: 'code',
      name: 'decided',
      code: 'return { approved: inputs.approved, note: inputs.note };',
      input: { approved: '{{approval.approved}}', note: '{{approval.query.note}}' },
    },
  ],
};

/** Two waits in a row: a request for the second may come while the run waits at the first. */
const TWO_WAITS: FlowDefinition = {
  trigger: TRIGGER,
  steps: [
    {
      type: 'code',
      name: 'ask',
      code: 'return inputs;',
      input: { gate: '{{waits.gate.approveUrl}}', reply: '{{waits.reply.resumeUrl}}' },
    },
    { type: 'wait', name: 'gate', kind: 'approval' },
    { type: 'wait', name: 'reply', kind: 'request' },
    { type: 'code', name: 'done', code: 'return inputs;', input: { said: '{{reply.body.said}}' } },
  ],
};

/** A request wait whose `/sync` URL gets the response step after it. */
const SYNC_REPLY: FlowDefinition = {
  trigger: TRIGGER,
  steps: [
    { type: 'code', name: 'ask', code: 'return inputs;', input: { sync: '{{waits.answer.syncUrl}}' } },
    { type: 'wait', name: 'answer', kind: 'request' },
    respond({ thanks: '{{answer.body.name}}' }),
  ],
};

/** A child answering with the parent's input; the parent waits for it and reads its response. */
const CHILD: FlowDefinition = {
  trigger: TRIGGER,
  steps: [respond({ got: '{{trigger.body.n}}' }, 201)],
};
const PARENT: FlowDefinition = {
  trigger: TRIGGER,
  steps: [
    { type: 'flow', name: 'child', flowId: 'child', input: { n: '{{trigger.body.n}}' }, wait: true },
    { type: 'code', name: 'after', code: 'return inputs;', input: { answer: '{{child.response}}' } },
  ],
};
/** Starts itself: SUBFLOW_MAX_DEPTH ends the chain. */
const RECURSE: FlowDefinition = {
  trigger: TRIGGER,
  steps: [{ type: 'flow', name: 'again', flowId: 'recurse', input: {}, wait: true }],
};

/** Charges (a side effect the test counts), then ships, which fails while the gate is closed. */
function shopFlow(base: string): FlowDefinition {
  return {
    trigger: TRIGGER,
    steps: [
      {
        type: 'code',
        name: 'charge',
        code: "await fetch(inputs.url, { method: 'POST' }); return { charged: true };",
        input: { url: `${base}/charge` },
      },
      {
        type: 'code',
        name: 'ship',
        code: "const gate = await (await fetch(inputs.url)).text(); if (gate !== 'open') throw new Error('the gate is ' + gate); return { shipped: true };",
        input: { url: `${base}/gate` },
      },
    ],
  };
}

const MAX_DEPTH = 2;

// Wait URLs, sub-flows and the rerun from the failed step against a real stack: one app, one
// worker, its engine pausing and resuming runs.
describe('durable runs: waits, sub-flows, rerun from the failed step', () => {
  let stack: RunningStack;
  let url: string;
  let dataDir: string;
  let side: Server;
  let charges = 0;
  let gate = 'closed';

  const run = (runId: string) => getRun(url, runId, stack.apiKey);
  const final = (runId: string) => waitForFinalRun(() => run(runId), runId, 60_000);
  async function paused(runId: string): Promise<RunView> {
    let last: RunView | undefined;
    await waitUntil(
      async () => {
        last = await run(runId);
        if (['SUCCEEDED', 'FAILED', 'TIMEOUT', 'INTERNAL_ERROR'].includes(last.status)) {
          throw new Error(
            `run ${runId} ended ${last.status} instead of pausing: ${JSON.stringify(last.error)}`,
          );
        }
        return last.status === 'PAUSED';
      },
      60_000,
      `run ${runId} paused`,
    );
    if (last === undefined) throw new Error('unreachable');
    return last;
  }
  async function start(flowId: string, body: unknown = {}): Promise<string> {
    const response = await postJson(`${url}/v1/webhooks/${flowId}`, body);
    expect(response.status).toBe(202);
    return ((await response.json()) as { runId: string }).runId;
  }
  const outputOf = (view: RunView, step: string) =>
    view.steps.find((s) => (s.path ?? s.name) === step)?.output;

  beforeAll(async () => {
    side = createServer((request, response) => {
      if (request.url === '/charge') charges += 1;
      response.end(request.url === '/gate' ? gate : 'ok');
    });
    await new Promise<void>((resolve) => side.listen(0, '127.0.0.1', resolve));
    const sidePort = (side.address() as AddressInfo).port;
    dataDir = await mkdtemp(join(tmpdir(), 'flowbox-durable-'));
    stack = await startStack({
      dataDir,
      apps: 1,
      workers: 1,
      port: 0,
      logLevel: 'warn',
      databaseUrl: await createTestDatabase(),
      redisUrl: inject('redisUrl'),
      s3: { ...inject('s3'), bucket: await createTestBucket() },
      appEnv: {
        REDIS_PREFIX: testNamespace(),
        WORKER_POLL_SECONDS: '2',
        SUBFLOW_MAX_DEPTH: String(MAX_DEPTH),
      },
      workerEnv: { EGRESS: `public,127.0.0.1:${sidePort}` },
      baseEnv: process.env,
    });
    url = stack.appUrls[0] ?? '';
    const flows: Record<string, FlowDefinition> = {
      approval: APPROVAL,
      'two-waits': TWO_WAITS,
      child: CHILD,
      parent: PARENT,
      recurse: RECURSE,
      'sync-reply': SYNC_REPLY,
      shop: shopFlow(`http://127.0.0.1:${sidePort}`),
    };
    for (const [id, definition] of Object.entries(flows)) {
      const created = await manage(
        url,
        'POST',
        '/v1/flows',
        { id, name: id, definition, publish: true },
        stack.apiKey,
      );
      expect(created.status, await created.clone().text()).toBe(201);
    }
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
    await new Promise((resolve) => side?.close(resolve));
    if (dataDir !== undefined) await rm(dataDir, { recursive: true, force: true });
  });

  it('resumes an approval from a GET of its approve URL, read by the step before the wait', {
    timeout: 120_000,
  }, async () => {
    const runId = await start('approval');
    const view = await paused(runId);
    const { approve } = outputOf(view, 'ask') as { approve: string };
    expect(approve).toMatch(new RegExp(`/v1/waits/${runId}/approval/[A-Za-z0-9_-]{43}/approve$`));
    const answered = await fetch(`${approve}?note=ok`);
    expect(answered.status).toBe(202);
    expect(await answered.json()).toEqual({ runId, resumed: true });
    const ended = await final(runId);
    expect(ended.status, JSON.stringify(ended.error)).toBe('SUCCEEDED');
    expect(outputOf(ended, 'decided')).toEqual({ approved: true, note: 'ok' });
    // The run has ended: its URLs answer 410.
    const late = await fetch(approve, { method: 'POST' });
    expect(late.status).toBe(410);
    expect(((await late.json()) as { error: { code: string } }).error.code).toBe('WAIT_ENDED');
  });

  it('answers two concurrent calls once: one 202, the other 409 naming the run', {
    timeout: 120_000,
  }, async () => {
    const runId = await start('approval');
    const { approve, reject } = outputOf(await paused(runId), 'ask') as { approve: string; reject: string };
    const answers = await Promise.all([
      fetch(approve, { method: 'POST' }),
      fetch(reject, { method: 'POST' }),
    ]);
    expect(answers.map((answer) => answer.status).sort()).toEqual([202, 409]);
    const refused = answers.find((answer) => answer.status === 409);
    const body = (await refused?.json()) as { error: { code: string; message: string } };
    expect(body.error.code).toBe('WAIT_ALREADY_RESUMED');
    expect(body.error.message).toContain(runId);
    const ended = await final(runId);
    const approved = answers[0]?.status === 202;
    expect(outputOf(ended, 'decided')).toMatchObject({ approved });
  });

  it('answers 404 for an unknown run, a wrong token and a path that names no wait', async () => {
    const unknown = await fetch(
      `${url}/v1/waits/6f1d1b2e-64a4-4c2b-9f0e-1d2c3b4a5f60/approval/${'a'.repeat(43)}/approve`,
    );
    expect(unknown.status).toBe(404);
    expect(((await unknown.json()) as { error: { code: string } }).error.code).toBe('RUN_NOT_FOUND');
    const runId = await start('approval');
    const { approve } = outputOf(await paused(runId), 'ask') as { approve: string };
    const forged = approve.replace(/\/([A-Za-z0-9_-]{43})\/approve$/, `/${'b'.repeat(43)}/approve`);
    expect((await fetch(forged)).status).toBe(404);
    // The approval's own token, on the URL of a request wait: not one of its URLs.
    expect((await fetch(approve.replace(/\/approve$/, ''))).status).toBe(404);
    expect((await fetch(approve)).status).toBe(202);
    await final(runId);
  });

  it('keeps a request that arrives before the run reaches its wait', { timeout: 120_000 }, async () => {
    const runId = await start('two-waits');
    const view = await paused(runId);
    const { gate: gateUrl, reply } = outputOf(view, 'ask') as { gate: string; reply: string };
    // The run waits at `gate`; `reply` is answered first and kept.
    const early = await postJson(reply, { said: 'early' });
    expect(early.status).toBe(202);
    expect((await run(runId)).status).toBe('PAUSED');
    expect((await fetch(gateUrl)).status).toBe(202);
    // Past the gate the run finds the reply kept: it ends without another request.
    const ended = await final(runId);
    expect(ended.status, JSON.stringify(ended.error)).toBe('SUCCEEDED');
    expect(outputOf(ended, 'done')).toEqual({ said: 'early' });
  });

  it("holds a /sync wait URL's caller until the run's next response step answers it", {
    timeout: 120_000,
  }, async () => {
    const runId = await start('sync-reply');
    const { sync } = outputOf(await paused(runId), 'ask') as { sync: string };
    const answer = await postJson(sync, { name: 'Ada' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-flowbox-run-id')).toBe(runId);
    expect(await answer.json()).toEqual({ thanks: 'Ada' });
    expect((await final(runId)).status).toBe('SUCCEEDED');
  });

  it('refuses a delay that is not a duration, and warns of a sub-flow that is not there', async () => {
    const bad = await manage(
      url,
      'POST',
      '/v1/flows',
      {
        id: 'bad-delay',
        name: 'bad',
        definition: { trigger: TRIGGER, steps: [{ type: 'delay', name: 'later', for: 'soon' }] },
      },
      stack.apiKey,
    );
    expect(bad.status).toBe(400);
    expect(await bad.json()).toMatchObject({
      error: {
        code: 'INVALID_FLOW',
        message: expect.stringContaining('definition.steps.0.for: "soon" is not a duration'),
      },
    });
    const orphan = await manage(
      url,
      'POST',
      '/v1/flows',
      {
        id: 'orphan',
        name: 'orphan',
        definition: {
          trigger: TRIGGER,
          steps: [{ type: 'flow', name: 'child', flowId: 'nowhere', input: {} }],
        },
      },
      stack.apiKey,
    );
    expect(orphan.status).toBe(201);
    expect(((await orphan.json()) as { warnings: string[] }).warnings).toContainEqual(
      expect.stringContaining("step 'child' starts flow 'nowhere', which does not exist"),
    );
  });

  it("returns a waited-for child's response to its parent, both runs linked", {
    timeout: 120_000,
  }, async () => {
    const parentId = await start('parent', { n: 7 });
    const ended = await final(parentId);
    expect(ended.status, JSON.stringify(ended.error)).toBe('SUCCEEDED');
    expect(outputOf(ended, 'after')).toEqual({ answer: { status: 201, headers: {}, body: { got: 7 } } });
    const childRuns = (ended as RunView & { childRuns: Array<{ id: string; path: string; status: string }> })
      .childRuns;
    expect(childRuns).toEqual([{ id: expect.any(String), path: 'child', status: 'SUCCEEDED' }]);
    const child = (await run(childRuns[0]?.id ?? '')) as RunView & {
      parentRunId: string;
      parentPath: string;
    };
    expect(child).toMatchObject({ parentRunId: parentId, parentPath: 'child', source: 'subflow' });
  });

  it('stops a flow that starts itself at SUBFLOW_MAX_DEPTH with a clear error', {
    timeout: 120_000,
  }, async () => {
    const topId = await start('recurse');
    const top = await final(topId);
    expect(top.status).toBe('FAILED');
    expect(top.error?.code).toBe('SUBFLOW_FAILED');
    // Down the chain to the run that was refused a child.
    let deepest = top as RunView & { childRuns: Array<{ id: string }> };
    for (let depth = 1; depth <= MAX_DEPTH; depth += 1) {
      const next = deepest.childRuns[0]?.id;
      expect(next, `a child at depth ${depth}`).toBeDefined();
      deepest = (await final(next ?? '')) as typeof deepest;
    }
    expect(deepest.childRuns).toEqual([]);
    expect(deepest.error?.code).toBe('SUBFLOW_TOO_DEEP');
    expect(deepest.error?.message).toContain(`SUBFLOW_MAX_DEPTH is ${MAX_DEPTH}`);
  });

  it('reruns from the failed step without running the steps that succeeded', {
    timeout: 120_000,
  }, async () => {
    gate = 'closed';
    charges = 0;
    const firstId = await start('shop');
    const first = await final(firstId);
    expect(first.status).toBe('FAILED');
    expect(first.error?.step).toBe('ship');
    expect(charges).toBe(1);
    gate = 'open';
    const rerun = await manage(url, 'POST', `/v1/runs/${firstId}/rerun`, { from: 'failed' }, stack.apiKey);
    expect(rerun.status, await rerun.clone().text()).toBe(202);
    const started = (await rerun.json()) as { runId: string; rerunOf: string; replayed: number };
    expect(started).toMatchObject({ rerunOf: firstId, replayed: 2 });
    const second = await final(started.runId);
    expect(second.status, JSON.stringify(second.error)).toBe('SUCCEEDED');
    expect(charges).toBe(1);
    expect(second.steps.find((step) => step.name === 'charge')).toMatchObject({ replayed: true });
    expect(outputOf(second, 'ship')).toEqual({ shipped: true });
    // A run that succeeded has no failed step to start from.
    const refused = await manage(
      url,
      'POST',
      `/v1/runs/${second.id}/rerun`,
      { from: 'failed' },
      stack.apiKey,
    );
    expect(refused.status).toBe(409);
    expect(((await refused.json()) as { error: { code: string } }).error.code).toBe('RERUN_NOT_POSSIBLE');
  });
});
