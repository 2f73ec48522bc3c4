import { describe, expect, it } from 'vitest';
import { statusUnder, stepTree } from '../inspector/src/step-tree.ts';

const result = (path: string, status = 'SUCCEEDED') => ({
  name:
    path
      .split('/')
      .at(-1)
      ?.replace(/\[\d+\]$/, '') ?? path,
  path,
  status,
});

describe('the run inspector’s step tree (by path)', () => {
  it('nests branches under their router and iterations under their loop, in index order', () => {
    const tree = stepTree([
      result('trigger'),
      result('route'),
      result('route/big/notify'),
      result('route/small/email', 'SKIPPED'),
      result('each'),
      result('each[1]/check'),
      result('each[0]/check'),
      result('each[0]/parts[0]/label'),
      result('after'),
    ]);
    expect(tree.map((node) => node.name)).toEqual(['trigger', 'route', 'each', 'after']);
    const [, route, each] = tree;
    expect(route?.result?.path).toBe('route');
    expect(route?.children.map((branch) => [branch.path, branch.result, statusUnder(branch)])).toEqual([
      ['route/big', undefined, 'SUCCEEDED'],
      ['route/small', undefined, 'SKIPPED'],
    ]);
    expect(each?.iterations.map((iteration) => iteration.path)).toEqual(['each[0]', 'each[1]']);
    const inner = each?.iterations[0]?.children.find((node) => node.name === 'parts');
    expect(inner?.iterations[0]?.children[0]?.result?.path).toBe('each[0]/parts[0]/label');
  });

  it('marks an iteration failed when a step inside it failed, and places results without a path by name', () => {
    const tree = stepTree([
      { name: 'trigger', status: 'SUCCEEDED' },
      result('each[0]/check'),
      result('each[1]/check', 'FAILED'),
    ]);
    expect(tree[0]?.path).toBe('trigger');
    const each = tree[1];
    expect(each?.result).toBeUndefined();
    expect(each?.iterations.map(statusUnder)).toEqual(['SUCCEEDED', 'FAILED']);
    expect(each === undefined ? null : statusUnder(each)).toBe('FAILED');
  });
});
