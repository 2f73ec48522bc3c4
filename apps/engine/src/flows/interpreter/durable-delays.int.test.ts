import { RunLogSchema } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { byPath, countingStep, pausedAt, useDurableHarness } from '../../../test/support/durable-harness.ts';
import { codeStep, FLOW_MODES, triggerWith } from '../../../test/support/flow-constructs.ts';
import { isUpload } from '../../../test/support/index.ts';
import { flowOf } from '../../../test/support/isolate-harness.ts';

const d = useDurableHarness();
const MINUTE = 60_000;

describe.each(FLOW_MODES)('durable runs: delays and replay, %s', (_mode, mode) => {
  it('a delay pauses the run (checkpoint in S3, no log); the resume replays the steps before it', async () => {
    const flow = flowOf(
      countingStep('first', d.counter.url),
      { type: 'delay', name: 'later', for: '5m' },
      codeStep('after', 'return inputs;', { first: '{{first}}', late: '{{later.lateMs}}' }),
    );
    const paused = await d.run(flow, mode);
    expect(pausedAt(paused)).toEqual(['later']);
    const wait = paused.pause?.waits[0];
    expect(wait).toMatchObject({ path: 'later', step: 'later', kind: 'delay' });
    expect(paused.steps.map((step) => `${step.path} ${step.status}`)).toEqual([
      'trigger SUCCEEDED',
      'first SUCCEEDED',
      'later WAITING',
    ]);
    expect(byPath(paused.steps, 'later')?.waitingFor).toBe(`until ${wait?.resumeAt}`);
    expect(d.h.app.requests.filter(isUpload)).toEqual([]);

    const key = paused.pause?.checkpointKey ?? '';
    expect(key).toMatch(/\/0\.json$/);
    const checkpoint = await d.store.read(key);
    expect(checkpoint).toMatchObject({
      version: 1,
      runId: 'run-1',
      flowVersionId: 'flow-version-1',
      resumes: 0,
    });
    expect(checkpoint.steps).toEqual({
      first: { status: 'SUCCEEDED', output: 1 },
      later: { status: 'WAITING', until: wait?.resumeAt },
    });

    d.clock.advance(5 * MINUTE + 1_500);
    const resumed = await d.run(flow, mode, { n: 1, from: paused });
    expect(resumed.status).toBe('SUCCEEDED');
    expect(byPath(resumed.steps, 'first')).toMatchObject({ status: 'SUCCEEDED', output: 1, replayed: true });
    const later = byPath(resumed.steps, 'later');
    expect(later?.replayed).toBeUndefined();
    expect(later?.output).toMatchObject({ scheduledFor: wait?.resumeAt });
    expect((later?.output as { lateMs?: number } | undefined)?.lateMs).toBeGreaterThanOrEqual(1_500);
    expect(byPath(resumed.steps, 'after')?.output).toMatchObject({ first: 1 });
    // `first` ran once across both attempts.
    expect(d.counter.hits('/first')).toBe(1);
    // The final log holds every step, the replayed one flagged.
    const log = RunLogSchema.parse(d.h.app.requests.find(isUpload)?.json);
    expect(log.steps.map((step) => [step.path, step.replayed ?? false])).toEqual([
      ['trigger', false],
      ['first', true],
      ['later', false],
      ['after', false],
    ]);
  });

  it('a delay shorter than PAUSE_MIN_MS sleeps in place: no pause, no checkpoint needed', async () => {
    const flow = flowOf({ type: 'delay', name: 'nap', for: '20ms' }, codeStep('after', 'return 1;'));
    const job = await d.job(flow, mode, { pauseMinMs: 5_000 });
    delete job.checkpointUpload;
    const { outcome } = await d.h.executor.execute(job);
    expect(outcome.status).toBe('SUCCEEDED');
    expect(byPath(outcome.steps, 'nap')).toMatchObject({
      status: 'SUCCEEDED',
      output: { scheduledFor: expect.any(String), resumedAt: expect.any(String), lateMs: expect.any(Number) },
    });
    expect(byPath(outcome.steps, 'after')?.status).toBe('SUCCEEDED');
  });

  it('delays in a loop at concurrency 3 pause together; the resume ends them all, replaying each iteration', async () => {
    const flow = flowOf(
      {
        type: 'loop',
        name: 'each',
        items: '{{trigger.body.items}}',
        concurrency: 3,
        steps: [
          countingStep('before', d.counter.url),
          { type: 'delay', name: 'nap', for: '{{each.item}}m' },
          codeStep('times', 'return inputs.v * 10;', { v: '{{each.item}}' }),
        ],
      },
      codeStep('sum', 'return inputs.all.reduce((s, it) => s + it.times, 0);', {
        all: '{{each.iterations}}',
      }),
    );
    const options = { trigger: triggerWith({ items: [1, 2, 3] }) };
    const paused = await d.run(flow, { ...mode, ...options });
    expect(pausedAt(paused)).toEqual(['each[0]/nap', 'each[1]/nap', 'each[2]/nap']);
    expect(byPath(paused.steps, 'each')).toBeUndefined();
    expect(byPath(paused.steps, 'sum')).toBeUndefined();
    expect(d.counter.hits('/before')).toBe(3);

    d.clock.advance(3 * MINUTE);
    const resumed = await d.run(flow, { ...mode, ...options }, { n: 1, from: paused });
    expect(resumed.status).toBe('SUCCEEDED');
    expect(byPath(resumed.steps, 'sum')?.output).toBe(60);
    for (const index of [0, 1, 2]) {
      expect(byPath(resumed.steps, `each[${index}]/before`)?.replayed).toBe(true);
      expect(byPath(resumed.steps, `each[${index}]/nap`)?.status).toBe('SUCCEEDED');
    }
    expect(d.counter.hits('/before')).toBe(3);
  });

  it('a loop at concurrency 1 starts no iteration while one waits; each resume goes one further', async () => {
    const flow = flowOf({
      type: 'loop',
      name: 'each',
      items: [1, 2],
      concurrency: 1,
      steps: [countingStep('before', d.counter.url), { type: 'delay', name: 'nap', for: '1m' }],
    });
    const first = await d.run(flow, mode);
    expect(pausedAt(first)).toEqual(['each[0]/nap']);
    d.clock.advance(2 * MINUTE);
    const second = await d.run(flow, mode, { n: 1, from: first });
    expect(pausedAt(second)).toEqual(['each[1]/nap']);
    expect((await d.store.read(second.pause?.checkpointKey ?? '')).resumes).toBe(1);
    d.clock.advance(2 * MINUTE);
    const third = await d.run(flow, mode, { n: 2, from: second });
    expect(third.status).toBe('SUCCEEDED');
    expect(d.counter.hits('/before')).toBe(2);
  });

  it('a delay in a router branch: the branch is taken again over the replayed outputs', async () => {
    const flow = flowOf(countingStep('first', d.counter.url), {
      type: 'router',
      name: 'route',
      mode: 'first',
      branches: [
        {
          name: 'once',
          when: [[{ left: '{{first}}', op: 'eq', right: 1 }]],
          steps: [countingStep('inside', d.counter.url), { type: 'delay', name: 'nap', for: '1m' }],
        },
      ],
      otherwise: [codeStep('other', 'return 1;')],
    });
    const paused = await d.run(flow, mode);
    expect(pausedAt(paused)).toEqual(['route/once/nap']);
    expect(byPath(paused.steps, 'route')).toBeUndefined();
    d.clock.advance(2 * MINUTE);
    const resumed = await d.run(flow, mode, { n: 1, from: paused });
    expect(resumed.status).toBe('SUCCEEDED');
    expect(byPath(resumed.steps, 'route')?.output).toEqual({ branch: 'once' });
    expect(byPath(resumed.steps, 'route/once/inside')?.replayed).toBe(true);
    expect([d.counter.hits('/first'), d.counter.hits('/inside')]).toEqual([1, 1]);
  });

  it('a failure beside a waiting iteration wins over the pause', async () => {
    const flow = flowOf({
      type: 'loop',
      name: 'each',
      items: [0, 1],
      concurrency: 2,
      steps: [
        codeStep('check', 'if (inputs.i === 1) throw new Error("bad item"); return 1;', {
          i: '{{each.index}}',
        }),
        { type: 'delay', name: 'nap', for: '1m' },
      ],
    });
    const outcome = await d.run(flow, mode);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.pause).toBeUndefined();
    expect(outcome.error).toMatchObject({ code: 'CODE_STEP_FAILED', step: 'check' });
  });

  it.each([
    ['a duration that is not one', { for: 'soon' }],
    ['a date that is not one', { until: '{{trigger.body.hello}}' }],
    ['a wait past RUN_MAX_PAUSE_DAYS', { for: '400d' }],
  ])('a delay with %s fails INVALID_DELAY', async (_name, when) => {
    const outcome = await d.run(flowOf({ type: 'delay', name: 'nap', ...when }), mode);
    expect(outcome.status).toBe('FAILED');
    expect(outcome.error).toMatchObject({ code: 'INVALID_DELAY', step: 'nap' });
  });
});

describe('durable runs: what a pause needs', () => {
  it('a pause without a checkpointUpload fails INTERNAL, saying why', async () => {
    const job = await d.job(flowOf({ type: 'delay', name: 'nap', for: '1h' }), {});
    delete job.checkpointUpload;
    const { outcome } = await d.h.executor.execute(job);
    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error).toMatchObject({
      code: 'INTERNAL',
      message: expect.stringMatching(/\(nap\).*no checkpointUpload/),
    });
  });

  it('a checkpoint that cannot be read fails the attempt CHECKPOINT_FAILED, running no step', async () => {
    const flow = flowOf(countingStep('first', d.counter.url));
    const job = await d.job(flow, {});
    job.resume = await d.store.resume('checkpoints/none/0.json');
    const { outcome } = await d.h.executor.execute(job);
    expect(outcome.error?.code).toBe('CHECKPOINT_FAILED');
    expect(d.counter.hits('/first')).toBe(0);
  });

  it('a checkpoint upload S3 refuses fails the attempt CHECKPOINT_FAILED', async () => {
    const job = await d.job(flowOf({ type: 'delay', name: 'nap', for: '1h' }), {});
    const upload = job.checkpointUpload;
    if (upload === undefined) throw new Error('no upload');
    job.checkpointUpload = { ...upload, fields: { ...upload.fields, key: `${upload.key}.forged` } };
    const { outcome } = await d.h.executor.execute(job);
    expect(outcome.status).toBe('INTERNAL_ERROR');
    expect(outcome.error?.code).toBe('CHECKPOINT_FAILED');
  });
});
