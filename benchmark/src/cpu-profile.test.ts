import { describe, expect, it } from 'vitest';
import { addProfile, type CpuProfile, emptyTree, originOf, selfTimeBy } from './cpu-profile.ts';
import { flameGraphSvg } from './flame-svg.ts';

const ROOT = '/repo';
const frame = (functionName: string, url = '', lineNumber = 0) => ({ functionName, url, lineNumber });

/**
 * root → main (apps/app) → parse (node_modules/zod), and root → (idle). Samples: main, parse,
 * parse, idle; each is charged the delta to the next sample (2, 3, 4 ms; the last nothing).
 */
const PROFILE: CpuProfile = {
  nodes: [
    { id: 1, callFrame: frame('(root)'), children: [2, 4] },
    { id: 2, callFrame: frame('main', `file://${ROOT}/apps/app/src/main.ts`, 9), children: [3] },
    {
      id: 3,
      callFrame: frame('parse', `file://${ROOT}/node_modules/.pnpm/zod@4/node_modules/zod/index.js`, 0),
    },
    { id: 4, callFrame: frame('(idle)') },
  ],
  samples: [2, 3, 3, 4],
  timeDeltas: [0, 2_000, 3_000, 4_000],
};

describe('CPU profiles', () => {
  it('charges each sample the time to the next, drops idle time, and sums self time by origin', () => {
    const tree = emptyTree();
    addProfile(tree, PROFILE, ROOT);
    // main 2 ms, then parse 3 + 4 ms; the idle sample (the last, charged nothing) is dropped.
    expect(tree.totalMs).toBeCloseTo(9);
    const main = tree.children.get('main (apps/app/src/main.ts:10)');
    expect(main?.selfMs).toBeCloseTo(2);
    expect(main?.totalMs).toBeCloseTo(9);
    expect(selfTimeBy(tree, (f) => f.origin)).toEqual([
      { key: 'zod', ms: expect.closeTo(7) },
      { key: 'apps/app', ms: expect.closeTo(2) },
    ]);
  });

  it('merges the profiles of several processes of one kind into one tree', () => {
    const tree = emptyTree();
    addProfile(tree, PROFILE, ROOT);
    addProfile(tree, PROFILE, ROOT);
    expect(tree.totalMs).toBeCloseTo(18);
    expect(tree.children.size).toBe(1);
  });

  it("names where code lives: packages, flowbox's folders, node internals, the cached engine and pieces", () => {
    expect(originOf(frame('f', 'node:internal/streams/writable'), ROOT)).toBe('node:');
    expect(originOf(frame('(garbage collector)'), ROOT)).toBe('(garbage collector)');
    expect(originOf(frame('f', 'file:///x/node_modules/@aws-sdk/client-s3/dist/index.js'), ROOT)).toBe(
      '@aws-sdk/client-s3',
    );
    expect(originOf(frame('f', `file://${ROOT}/packages/protocol/src/parse.ts`), ROOT)).toBe(
      'packages/protocol',
    );
    const engine = `file:///tmp/c/engine/${'a'.repeat(64)}/engine-snapshot.cjs`;
    expect(originOf(frame('f', engine), ROOT)).toBe('apps/engine (bundle)');
    expect(originOf(frame('f', 'file:///tmp/c/pieces/webhook@0.1.0-abc/index.mjs?x'), ROOT)).toBe(
      'piece webhook',
    );
  });

  it('draws every frame wider than a pixel with its time in a tooltip, names escaped', () => {
    const tree = emptyTree();
    addProfile(tree, PROFILE, ROOT);
    const svg = flameGraphSvg(tree, 'app <test>');
    expect(svg).toMatch(/^<svg /);
    expect(svg).toContain('app &lt;test&gt;: 9 ms on CPU');
    expect(svg).toContain(
      '<title>main (apps/app/src/main.ts:10) [apps/app]: 9.0 ms total (100.0 %), 2.0 ms self</title>',
    );
    expect(svg.match(/<rect x=/g)).toHaveLength(3);
  });
});
