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

  it("shows a failed code step's position and the frames of its code", () => {
    const step = {
      name: 'step_2',
      kind: 'code',
      status: 'FAILED',
      durationMs: 1,
      startedAt: '',
      error: {
        code: 'CODE_STEP_FAILED',
        message: 'boom (line 2, column 9)',
        stack: 'Error: boom\n    at f (file:///code-step.js:2:9)\n    at codeStep (file:///code-step.js:5:1)',
      },
    };
    const text = renderRun({ ...RUN, steps: [step] });
    expect(text).toMatch(/step_2\s+code\s+FAILED\s+1 ms\s+CODE_STEP_FAILED: boom \(line 2, column 9\)\n/);
    expect(text).toContain(
      ['step_2 failed', '  at f (file:///code-step.js:2:9)', '  at codeStep (file:///code-step.js:5:1)'].join(
        '\n',
      ),
    );
  });

  it('names nested steps by their path, and a skipped branch with why', () => {
    const text = renderRun({
      ...RUN,
      steps: [
        {
          name: 'check',
          path: 'each[3]/check',
          kind: 'code',
          status: 'SUCCEEDED',
          durationMs: 1,
          startedAt: '',
          output: { ok: 1 },
        },
        {
          name: 'small',
          path: 'route/small',
          kind: 'branch',
          status: 'SKIPPED',
          durationMs: 0,
          startedAt: '',
          skipReason: 'a branch ran',
        },
      ],
    });
    expect(text).toMatch(/each\[3\]\/check\s+code\s+SUCCEEDED\s+1 ms\s+\{"ok":1\}/);
    expect(text).toMatch(/route\/small\s+branch\s+SKIPPED\s+0 ms\s+a branch ran/);
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

describe('runs show, for a paused run', () => {
  it('says how often it resumed, when it paused, and where it waits', () => {
    const text = renderRun({
      ...RUN,
      status: 'PAUSED',
      error: null,
      timings: null,
      resumes: 2,
      pausedAt: '2026-11-25T18:00:01.000Z',
      steps: [
        {
          name: 'later',
          kind: 'delay',
          status: 'WAITING',
          durationMs: 0,
          startedAt: '',
          waitingFor: 'until 2026-11-25T19:00:00.000Z',
        },
      ],
      waits: [
        {
          path: 'later',
          kind: 'delay',
          resumeAt: '2026-11-25T19:00:00.000Z',
          timeoutAt: null,
          childRunId: null,
          answered: false,
        },
        { path: 'ok', kind: 'approval', resumeAt: null, timeoutAt: null, childRunId: null, answered: true },
      ],
    });
    expect(text).toMatch(/resumes\s+2/);
    expect(text).toMatch(/paused\s+2026-11-25T18:00:01.000Z/);
    expect(text).toMatch(/later\s+delay\s+resumes 2026-11-25T19:00:00.000Z/);
    expect(text).toMatch(/ok\s+approval\s+answered/);
    expect(text).toContain('waiting for until 2026-11-25T19:00:00.000Z');
  });
});
