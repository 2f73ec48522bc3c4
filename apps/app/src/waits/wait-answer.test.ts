import type { FlowDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { waitUrlKey } from '../queue/durable-dispatch.ts';
import { answerWait, staticPath, type WaitAnswerDeps, type WaitCall, waitStepAt } from './wait-answer.ts';
import { waitToken } from './wait-token.ts';
import type { WaitRun } from './waits-repository.ts';

const SECRET = 'a-wait-url-secret-of-32-characters!!';
const RUN = '6f1d1b2e-64a4-4c2b-9f0e-1d2c3b4a5f60';

const definition = {
  trigger: { piece: 'webhook', trigger: 'catch', input: {} },
  steps: [
    { type: 'wait', name: 'approval', kind: 'approval' },
    {
      type: 'loop',
      name: 'each',
      items: '{{trigger.items}}',
      steps: [{ type: 'wait', name: 'reply', kind: 'request' }],
    },
    { type: 'code', name: 'after', input: {}, source: 'export default () => 1' },
  ],
} as unknown as FlowDefinition;

function world(run: WaitRun | null, waitingAt = new Set(['approval', 'each[2]/reply'])) {
  const answers = new Map<string, unknown>();
  const resumed: Array<{ runId: string; options: unknown }> = [];
  const deps: WaitAnswerDeps = {
    secret: SECRET,
    definition: async () => definition,
    resumer: {
      resume: async (runId, options) => {
        resumed.push({ runId, options });
        return 1;
      },
    },
    waits: {
      run: async () => run,
      answer: async (runId, path, _kind, value) => {
        if (answers.has(`${runId} ${path}`)) return null;
        answers.set(`${runId} ${path}`, value);
        return { waiting: waitingAt.has(path) };
      },
      answerTo: async () => {},
    },
  };
  return { deps, answers, resumed };
}

const request = { method: 'GET', body: {}, query: { note: 'ok' }, headers: { 'user-agent': 't' } };
const call = (path: string, route: WaitCall['route'], token = waitToken(waitUrlKey(SECRET, RUN), path)) => ({
  runId: RUN,
  path,
  token,
  route,
  request,
});
const PAUSED: WaitRun = { status: 'PAUSED', flowVersionId: 'v1', finished: false };

describe('answerWait', () => {
  it('keeps an approval with approved: true and resumes the run', async () => {
    const { deps, answers, resumed } = world(PAUSED);
    await answerWait(deps, call('approval', 'approve'));
    expect(answers.get(`${RUN} approval`)).toEqual({ ...request, approved: true });
    expect(resumed).toEqual([{ runId: RUN, options: { cause: 'request' } }]);
  });

  it("answers a loop iteration's wait by its run path", async () => {
    const { deps, answers } = world(PAUSED);
    await answerWait(deps, call('each[2]/reply', 'resume'));
    expect(answers.get(`${RUN} each[2]/reply`)).toEqual(request);
  });

  it('answers a second call 409 naming the run', async () => {
    const { deps } = world(PAUSED);
    await answerWait(deps, call('approval', 'reject'));
    await expect(answerWait(deps, call('approval', 'approve'))).rejects.toMatchObject({
      code: 'WAIT_ALREADY_RESUMED',
      message: expect.stringContaining(RUN),
    });
  });

  it('answers 410 for an ended run, 404 for an unknown run, a bad token or no such wait', async () => {
    await expect(
      answerWait(world({ ...PAUSED, status: 'SUCCEEDED', finished: true }).deps, call('approval', 'approve')),
    ).rejects.toMatchObject({ code: 'WAIT_ENDED' });
    await expect(answerWait(world(null).deps, call('approval', 'approve'))).rejects.toMatchObject({
      code: 'RUN_NOT_FOUND',
    });
    await expect(answerWait(world(PAUSED).deps, call('approval', 'approve', 'forged'))).rejects.toMatchObject(
      {
        code: 'RUN_NOT_FOUND',
      },
    );
    for (const bad of [
      call('after', 'resume'),
      call('approval', 'resume'),
      call('each[0]/reply', 'approve'),
    ]) {
      await expect(answerWait(world(PAUSED).deps, bad)).rejects.toMatchObject({ code: 'RUN_NOT_FOUND' });
    }
  });

  it('keeps an answer for a run that has not reached its wait, and does not resume it', async () => {
    const { deps, answers, resumed } = world(PAUSED, new Set());
    await answerWait(deps, call('approval', 'approve'));
    expect(answers.size).toBe(1);
    expect(resumed).toEqual([]);
  });
});

describe('wait paths', () => {
  it('finds a wait step by its run path', () => {
    expect(staticPath('each[12]/inner[3]/reply')).toBe('each/inner/reply');
    expect(waitStepAt(definition, 'each[1]/reply')?.name).toBe('reply');
    expect(waitStepAt(definition, 'after')).toBeNull();
    expect(waitStepAt(definition, 'missing')).toBeNull();
  });
});
