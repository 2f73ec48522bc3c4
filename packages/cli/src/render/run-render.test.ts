import { describe, expect, it } from 'vitest';
import { ms, type RunDetail, renderRun, renderRunList } from './run-render.ts';

const RUN: RunDetail = {
  id: 'run-1',
  flowId: 'hello',
  flowVersionId: 'hello-v2',
  status: 'FAILED',
  sync: true,
  createdAt: '2026-11-25T18:00:00.000Z',
  attempts: 1,
  workerId: 'worker-0',
  isolation: 'process',
  source: 'manual',
  logUrl: null,
  error: { code: 'STEP_FAILED', message: 'boom', step: 'greet' },
  timings: {
    queueMs: 10,
    provisionMs: 50,
    bootMs: 0,
    runMs: 40,
    logPersistMs: 0,
    totalMs: 100,
    workerBusyMs: 90,
    provision: { bundleMs: 5, engineMs: 0, piecesMs: 45 },
  },
  steps: [
    {
      name: 'trigger',
      kind: 'webhook/catch_webhook',
      status: 'SUCCEEDED',
      durationMs: 0.25,
      startedAt: '',
      output: {},
    },
    {
      name: 'greet',
      kind: 'greeter/greet',
      status: 'FAILED',
      durationMs: 3,
      startedAt: '',
      error: { code: 'STEP_FAILED', message: 'boom' },
    },
  ],
};

describe('runs show', () => {
  it('names the error and its step, each phase with a bar scaled to the total, and each step', () => {
    const text = renderRun(RUN);
    expect(text).toContain('error    STEP_FAILED at greet: boom');
    expect(text).toMatch(/isolation\s+process\n/);
    expect(text).toMatch(/started by\s+manual\n/);
    expect(text).toMatch(/provision\s+50 ms\s+#{20}\n/);
    expect(text).toMatch(/run\s+40 ms\s+#{16}\n/);
    expect(text).toMatch(/total\s+100 ms/);
    expect(text).toContain('(provision: bundle 5 ms, engine 0 ms, pieces 45 ms)');
    expect(text).toMatch(/greet\s+greeter\/greet\s+FAILED\s+3 ms\s+STEP_FAILED: boom/);
    expect(text).toMatch(/trigger\s+webhook\/catch_webhook\s+SUCCEEDED\s+0\.3 ms\s+\{\}/);
  });

  it('says a run in flight has no timings yet', () => {
    expect(renderRun({ ...RUN, status: 'RUNNING', timings: null, error: null, steps: [] })).toMatch(
      /time\n {2}\(not finished\)\n\nsteps\n {2}\(none yet\)/,
    );
  });
});

describe('runs list', () => {
  it('is a table with a header, or says there are none', () => {
    expect(renderRunList([])).toBe('no runs');
    const lines = renderRunList([
      RUN,
      { ...RUN, id: 'run-2', status: 'QUEUED', timings: null, error: null },
    ]).split('\n');
    expect(lines[0]).toMatch(/^RUN\s+FLOW\s+STATUS\s+MODE\s+CREATED\s+TOTAL\s+ERROR$/);
    expect(lines[1]).toMatch(/^run-1\s+hello\s+FAILED\s+sync\s+\S+\s+100 ms\s+STEP_FAILED at greet$/);
    expect(lines[2]).toMatch(/^run-2\s+hello\s+QUEUED\s+sync\s+\S+\s+-/);
  });

  it('rounds milliseconds as people read them', () => {
    expect([ms(612.33), ms(5.94), ms(0)]).toEqual(['612 ms', '5.9 ms', '0 ms']);
  });
});
