import type { StepDefinition } from '@flowbox/protocol';
import { describe, expect, it } from 'vitest';
import { publishWarnings } from './publish-warnings.ts';

const code = (name: string): StepDefinition => ({ type: 'code', name, code: 'return 1', input: {} });
const respond: StepDefinition = {
  type: 'piece',
  name: 'reply',
  piece: 'webhook',
  action: 'return_response',
  input: {},
};
const router = (withOtherwise: boolean, ...bodies: StepDefinition[][]): StepDefinition => ({
  type: 'router',
  name: 'route',
  mode: 'first',
  branches: bodies.map((steps, index) => ({
    name: `b${index}`,
    when: [[{ left: 1, op: 'eq', right: 1 }]],
    steps,
  })),
  ...(withOtherwise ? { otherwise: [respond] } : {}),
});

describe('publishWarnings', () => {
  it('says nothing when every path answers', () => {
    expect(publishWarnings({ steps: [code('a'), respond] })).toEqual([]);
    expect(publishWarnings({ steps: [router(true, [respond], [code('b'), respond])] })).toEqual([]);
    expect(
      publishWarnings({
        steps: [{ type: 'stop', name: 'halt', status: 'SUCCEEDED', response: { status: 200 } }],
      }),
    ).toEqual([]);
  });

  it('warns when no step answers', () => {
    expect(publishWarnings({ steps: [code('a')] })).toEqual([expect.stringMatching(/^no step answers/)]);
  });

  it('warns when only some paths answer: a branch, a router without otherwise, a loop, a stop first', () => {
    const some = /^not every path/;
    expect(publishWarnings({ steps: [router(true, [code('b')])] })).toEqual([expect.stringMatching(some)]);
    expect(publishWarnings({ steps: [router(false, [respond])] })).toEqual([expect.stringMatching(some)]);
    const loop: StepDefinition = {
      type: 'loop',
      name: 'each',
      items: '{{trigger.items}}',
      concurrency: 1,
      steps: [respond],
    };
    expect(publishWarnings({ steps: [loop] })).toEqual([expect.stringMatching(some)]);
    const stop: StepDefinition = { type: 'stop', name: 'halt', status: 'SUCCEEDED' };
    expect(publishWarnings({ steps: [stop, respond] })).toEqual([expect.stringMatching(/^no step answers/)]);
  });

  it('warns of a response that comes after a step that makes the run wait, on its path only', () => {
    const approval: StepDefinition = { type: 'wait', name: 'approval', kind: 'approval' };
    const late = /^step 'reply' answers a sync caller after step 'approval' made the run wait/;
    expect(publishWarnings({ steps: [approval, respond] })).toEqual([expect.stringMatching(late)]);
    expect(publishWarnings({ steps: [approval, router(true, [code('b')])] })).toEqual([
      expect.stringMatching(/^not every path/),
      expect.stringMatching(late),
    ]);
    expect(publishWarnings({ steps: [respond, approval] })).toEqual([]);
    // A sibling branch's wait is not on the answering branch's path.
    expect(publishWarnings({ steps: [router(false, [approval], [respond])] })).toEqual([
      expect.stringMatching(/^not every path/),
    ]);
    const child: StepDefinition = { type: 'flow', name: 'child', flowId: 'c', input: {}, wait: false };
    expect(publishWarnings({ steps: [child, respond] })).toEqual([]);
  });
});
