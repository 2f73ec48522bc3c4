import { createHmac } from 'node:crypto';
import {
  type FlowDefinition,
  type RetryPolicy,
  type StepDefinition,
  SubflowStartSchema,
  waitStepUrls,
} from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { byPath, countingStep, pausedAt, useDurableHarness } from '../../../test/support/durable-harness.ts';
import { codeStep, FLOW_MODES } from '../../../test/support/flow-constructs.ts';
import { flowOf } from '../../../test/support/isolate-harness.ts';

const d = useDurableHarness();
const MINUTE = 60_000;
const WAIT_URLS = { baseUrl: 'https://flows.example.com/', key: 'k'.repeat(40) };
/** The app's derivation of a wait URL's token, written out here to hold the engine to it. */
const token = (path: string) => createHmac('sha256', WAIT_URLS.key).update(path).digest('base64url');

const APPROVAL: FlowDefinition = flowOf(
  codeStep('send', 'return inputs;', {
    approve: '{{waits.approval.approveUrl}}',
    reject: '{{waits.approval.rejectUrl}}',
  }),
  { type: 'wait', name: 'approval', kind: 'approval', timeout: '1h' },
  codeStep('after', 'return inputs;', { approved: '{{approval.approved}}' }),
);

/** A code step that calls the counter's `/flaky`, failing `HTTP 503` while it answers that. */
const flaky = (url: string, retry: RetryPolicy): StepDefinition => ({
  type: 'code',
  name: 'call',
  code: "const r = await fetch(inputs.url); if (r.status !== 200) throw new Error('HTTP ' + r.status); return r.status;",
  input: { url: `${url}/flaky` },
  retry,
});

describe.each(FLOW_MODES)('durable runs: waits, sub-flows, retries, %s', (_mode, mode) => {
  it('a wait: its URLs reach the steps before it; the value that arrived is its output', async () => {
    const paused = await d.run(APPROVAL, { ...mode, waitUrls: WAIT_URLS });
    expect(pausedAt(paused)).toEqual(['approval']);
    const wait = paused.pause?.waits[0];
    expect(wait).toMatchObject({ kind: 'approval', timeoutAt: expect.any(String) });
    expect(wait?.resumeAt).toBeUndefined();
    expect(byPath(paused.steps, 'approval')).toMatchObject({ status: 'WAITING', waitingFor: 'an approval' });
    const urls = waitStepUrls(WAIT_URLS.baseUrl, 'run-1', 'approval', token('approval'));
    expect(byPath(paused.steps, 'send')?.output).toEqual({
      approve: urls.approveUrl,
      reject: urls.rejectUrl,
    });
    expect(urls.approveUrl).toBe(
      `https://flows.example.com/v1/waits/run-1/approval/${token('approval')}/approve`,
    );

    const value = { method: 'GET', body: null, query: {}, headers: {}, approved: true };
    const resumed = await d.run(
      APPROVAL,
      { ...mode, waitUrls: WAIT_URLS },
      {
        n: 1,
        from: paused,
        values: { approval: value },
      },
    );
    expect(resumed.status).toBe('SUCCEEDED');
    expect(byPath(resumed.steps, 'approval')?.output).toEqual(value);
    expect(byPath(resumed.steps, 'after')?.output).toEqual({ approved: true });
    expect(byPath(resumed.steps, 'send')?.replayed).toBe(true);
  });

  it("a wait in a loop: each iteration's URL names its own path", async () => {
    const flow = flowOf({
      type: 'loop',
      name: 'each',
      items: ['a', 'b'],
      concurrency: 2,
      steps: [
        codeStep('send', 'return inputs.url;', { url: '{{waits.ok.resumeUrl}}' }),
        { type: 'wait', name: 'ok', kind: 'request' },
      ],
    });
    const paused = await d.run(flow, { ...mode, waitUrls: WAIT_URLS });
    expect(pausedAt(paused)).toEqual(['each[0]/ok', 'each[1]/ok']);
    for (const path of ['each[0]/ok', 'each[1]/ok']) {
      const send = byPath(paused.steps, path.replace('/ok', '/send'));
      expect(send?.output).toBe(waitStepUrls(WAIT_URLS.baseUrl, 'run-1', path, token(path)).resumeUrl);
    }
  });

  it('a wait past its timeout fails WAIT_TIMEOUT; with continueOnFailure the run goes on', async () => {
    for (const continueOnFailure of [false, true]) {
      const flow = flowOf(
        { type: 'wait', name: 'hook', kind: 'request', timeout: '10m', continueOnFailure },
        codeStep('after', 'return inputs;', { code: '{{hook.error.code}}' }),
      );
      const paused = await d.run(flow, mode);
      expect(pausedAt(paused)).toEqual(['hook']);
      d.clock.advance(5 * MINUTE);
      const again = await d.run(flow, mode, { n: 1, from: paused });
      expect(pausedAt(again)).toEqual(['hook']);
      expect(again.pause?.waits[0]?.timeoutAt).toBe(paused.pause?.waits[0]?.timeoutAt);
      d.clock.advance(6 * MINUTE);
      const ended = await d.run(flow, mode, { n: 2, from: again });
      if (continueOnFailure) {
        expect(ended.status).toBe('SUCCEEDED');
        expect(byPath(ended.steps, 'hook')).toMatchObject({ status: 'FAILED', continued: true });
        expect(byPath(ended.steps, 'after')?.output).toEqual({ code: 'WAIT_TIMEOUT' });
      } else {
        expect(ended.status).toBe('FAILED');
        expect(ended.error).toMatchObject({ code: 'WAIT_TIMEOUT', step: 'hook' });
      }
    }
  });

  it('a retry in place: failed attempts are made again and recorded', async () => {
    d.counter.failFlaky(2);
    const retry = { maxAttempts: 5, delayMs: 10, factor: 2, maxDelayMs: 1_000, jitter: false, on: [503] };
    const outcome = await d.run(flowOf(flaky(d.counter.url, retry)), mode, { pauseMinMs: 5_000 });
    expect(outcome.status).toBe('SUCCEEDED');
    const call = byPath(outcome.steps, 'call');
    expect(call?.output).toBe(200);
    expect(call?.attempts?.map((attempt) => attempt.error.message)).toEqual([
      expect.stringContaining('HTTP 503'),
      expect.stringContaining('HTTP 503'),
    ]);
    expect(d.counter.hits('/flaky')).toBe(3);
  });

  it('a retry whose `on` does not match fails at once; maxAttempts bounds the rest', async () => {
    d.counter.failFlaky(10);
    const other = {
      maxAttempts: 5,
      delayMs: 1,
      factor: 1,
      maxDelayMs: 1,
      jitter: false,
      on: ['STEP_TIMEOUT'],
    };
    const once = await d.run(flowOf(flaky(d.counter.url, other)), mode);
    expect(once.error).toMatchObject({ step: 'call', message: expect.stringContaining('HTTP 503') });
    expect(d.counter.hits('/flaky')).toBe(1);
    const bounded = { maxAttempts: 3, delayMs: 1, factor: 1, maxDelayMs: 1, jitter: false };
    const thrice = await d.run(flowOf(flaky(d.counter.url, bounded)), mode);
    expect(thrice.status).toBe('FAILED');
    expect(byPath(thrice.steps, 'call')?.attempts).toHaveLength(2);
    expect(d.counter.hits('/flaky')).toBe(4);
  });

  it('a retry whose backoff reaches PAUSE_MIN_MS pauses; its attempts carry across the resumes', async () => {
    d.counter.failFlaky(2);
    const retry = {
      maxAttempts: 5,
      delayMs: MINUTE,
      factor: 2,
      maxDelayMs: 10 * MINUTE,
      jitter: false,
      on: [503],
    };
    const flow = flowOf(countingStep('first', d.counter.url), flaky(d.counter.url, retry));
    const first = await d.run(flow, mode);
    expect(pausedAt(first)).toEqual(['call']);
    expect(first.pause?.waits[0]).toMatchObject({ kind: 'retry', resumeAt: expect.any(String) });
    expect(byPath(first.steps, 'call')).toMatchObject({ status: 'WAITING', attempts: [expect.anything()] });
    const kept = await d.store.read(first.pause?.checkpointKey ?? '');
    expect(kept.steps.call).toMatchObject({ status: 'WAITING', until: first.pause?.waits[0]?.resumeAt });
    expect(kept.steps.call?.attempts).toHaveLength(1);

    d.clock.advance(MINUTE + 1_000);
    const second = await d.run(flow, mode, { n: 1, from: first });
    expect(pausedAt(second)).toEqual(['call']);
    expect(byPath(second.steps, 'call')?.attempts).toHaveLength(2);
    const resumeAt = Date.parse(second.pause?.waits[0]?.resumeAt ?? '');
    expect(resumeAt - d.clock.now()).toBeGreaterThan(MINUTE);

    d.clock.advance(2 * MINUTE + 1_000);
    const third = await d.run(flow, mode, { n: 2, from: second });
    expect(third.status).toBe('SUCCEEDED');
    expect(byPath(third.steps, 'call')).toMatchObject({
      output: 200,
      attempts: [expect.anything(), expect.anything()],
    });
    expect([d.counter.hits('/first'), d.counter.hits('/flaky')]).toEqual([1, 3]);
  });

  it("a sub-flow: the app names the child; with wait the run pauses and takes the child's response", async () => {
    d.h.app.setResponder((r) =>
      r.url.endsWith('/subflows') ? { status: 200, body: '{"runId":"child-1"}' } : 204,
    );
    const flow = flowOf(
      { type: 'flow', name: 'child', flowId: 'flow-2', input: { who: '{{trigger.body.hello}}' }, wait: true },
      codeStep('after', 'return inputs.body;', { body: '{{child.response.body}}' }),
    );
    const paused = await d.run(flow, mode);
    expect(pausedAt(paused)).toEqual(['child']);
    expect(paused.pause?.waits[0]).toMatchObject({ kind: 'flow', childRunId: 'child-1' });
    expect(byPath(paused.steps, 'child')?.waitingFor).toBe('run child-1');
    const asked = d.h.posts('subflows').map((r) => SubflowStartSchema.parse(r.json));
    expect(asked).toEqual([
      {
        version: 1,
        type: 'subflow-start',
        path: 'child',
        flowId: 'flow-2',
        input: { who: 'world' },
        wait: true,
      },
    ]);

    const response = { status: 200, headers: {}, body: { ok: 1 } };
    const values = { child: { runId: 'child-1', status: 'SUCCEEDED', response } };
    const resumed = await d.run(flow, mode, { n: 1, from: paused, values });
    expect(resumed.status).toBe('SUCCEEDED');
    expect(byPath(resumed.steps, 'child')?.output).toEqual({
      runId: 'child-1',
      status: 'SUCCEEDED',
      response,
    });
    expect(byPath(resumed.steps, 'after')?.output).toEqual({ ok: 1 });
    expect(d.h.posts('subflows')).toHaveLength(1);

    const failedChild = {
      child: { runId: 'child-1', status: 'FAILED', error: { code: 'X', message: 'no stock' } },
    };
    const failed = await d.run(flow, mode, { n: 1, from: paused, values: failedChild });
    expect(failed.error).toMatchObject({ code: 'SUBFLOW_FAILED', step: 'child' });
    expect(failed.error?.message).toMatch(/child run child-1 ended FAILED: X: no stock/);
  });

  it('a sub-flow without wait succeeds with the run id; a refusal fails the step with its code', async () => {
    d.h.app.setResponder((r) =>
      r.url.endsWith('/subflows') ? { status: 200, body: '{"runId":"child-2"}' } : 204,
    );
    const flow = flowOf({ type: 'flow', name: 'child', flowId: 'flow-2', input: {}, wait: false });
    const started = await d.run(flow, mode);
    expect(started.status).toBe('SUCCEEDED');
    expect(byPath(started.steps, 'child')?.output).toEqual({ runId: 'child-2' });

    const tooDeep = JSON.stringify({ error: { code: 'SUBFLOW_TOO_DEEP', message: 'depth 6 is past 5' } });
    d.h.app.setResponder((r) => (r.url.endsWith('/subflows') ? { status: 500, body: tooDeep } : 204));
    const refused = await d.run(flow, mode);
    expect(refused.status).toBe('FAILED');
    expect(refused.error).toMatchObject({
      code: 'SUBFLOW_TOO_DEEP',
      step: 'child',
      message: 'depth 6 is past 5',
    });
  });
});
