import type { SubflowStart } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import type { PublishedFlow } from '../flows/flows-repository.ts';
import { type SubflowStartDeps, startSubflow } from './subflow-start.ts';

const PARENT = '6f1d1b2e-64a4-4c2b-9f0e-1d2c3b4a5f60';
const start = (wait = true): SubflowStart => ({
  version: 1,
  type: 'subflow-start',
  path: 'each[1]/child',
  flowId: 'double',
  input: { n: 2 },
  wait,
});
const published: PublishedFlow = {
  flowId: 'double',
  flowVersionId: 'double-v1',
  enabled: true,
  runWhenCallerGone: false,
  verify: null,
  triggerPiece: 'webhook',
  triggerPolls: false,
  errorResponse: null,
};

/** The parent at `depth`, its children by path, and what each call did, in order. */
function world(depth: number, flow: PublishedFlow | null = published) {
  const children = new Map<string, string>();
  const calls: string[] = [];
  const deps: SubflowStartDeps = {
    maxDepth: 2,
    flows: { findPublished: async () => flow },
    subflows: {
      depthOf: async () => depth,
      childAt: async (_parent, path) => children.get(path) ?? null,
      awaitChild: async (_parent, path, child) => void calls.push(`await ${path} ${child}`),
      answerParent: async () => null,
      children: async () => [],
    },
    lifecycle: {
      accept: async (run) => {
        calls.push(`accept ${run.source} depth ${run.parent?.depth} ${JSON.stringify(run.trigger.body)}`);
        if (run.parent !== undefined) children.set(run.parent.path, run.id);
        return { rank: 1 };
      },
      failUnqueued: async () => void calls.push('failUnqueued'),
    },
    queue: { add: async (job) => void calls.push(`enqueue ${job.flowVersionId}`) },
  };
  return { deps, calls };
}

describe('startSubflow', () => {
  it('creates one child per parent and path: asking again names the same child', async () => {
    const { deps, calls } = world(1);
    const first = await startSubflow(deps, PARENT, start());
    expect(calls).toEqual([
      `await each[1]/child ${first}`,
      'accept subflow depth 2 {"n":2}',
      'enqueue double-v1',
    ]);
    calls.length = 0;
    expect(await startSubflow(deps, PARENT, start())).toBe(first);
    expect(calls).toEqual([`await each[1]/child ${first}`]);
  });

  it('writes no waiting point for a child it does not wait for', async () => {
    const { deps, calls } = world(0);
    await startSubflow(deps, PARENT, start(false));
    expect(calls.some((call) => call.startsWith('await'))).toBe(false);
  });

  it('refuses past SUBFLOW_MAX_DEPTH and a flow that is not live, starting nothing', async () => {
    const deep = world(2);
    await expect(startSubflow(deep.deps, PARENT, start())).rejects.toMatchObject({
      code: 'SUBFLOW_TOO_DEEP',
      message: expect.stringContaining('SUBFLOW_MAX_DEPTH is 2'),
    });
    expect(deep.calls).toEqual([]);
    const missing = world(0, null);
    await expect(startSubflow(missing.deps, PARENT, start())).rejects.toMatchObject({
      code: 'FLOW_NOT_FOUND',
    });
    const disabled = world(0, { ...published, enabled: false });
    await expect(startSubflow(disabled.deps, PARENT, start())).rejects.toMatchObject({
      code: 'FLOW_NOT_FOUND',
    });
    expect([...missing.calls, ...disabled.calls]).toEqual([]);
  });
});
