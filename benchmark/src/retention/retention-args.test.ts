import { describe, expect, it } from 'vitest';
import { parseRetentionArgs } from './retention-args.ts';

const defaults = { cwd: '/here', defaultOutDir: '/here/results' };

describe('parseRetentionArgs', () => {
  it('defaults to a million expired runs, a tenth as many kept, 10,000 real logs', () => {
    expect(parseRetentionArgs([], defaults)).toMatchObject({
      expired: 1_000_000,
      kept: 100_000,
      logs: 10_000,
      reads: 20,
      outDir: '/here/results',
      build: true,
    });
  });

  it('puts no more logs than expired runs by default, and refuses more on request', () => {
    expect(parseRetentionArgs(['--expired', '500'], defaults).logs).toBe(500);
    expect(() => parseRetentionArgs(['--expired', '500', '--logs', '501'], defaults)).toThrow(/--logs/);
    expect(() => parseRetentionArgs(['--expired', '0'], defaults)).toThrow(/--expired/);
  });
});
