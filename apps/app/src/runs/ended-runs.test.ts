import { describe, expect, it } from 'vitest';
import { EndedRuns } from './ended-runs.ts';

describe('EndedRuns', () => {
  it('says a run has ended once it ended, and not before', () => {
    const ended = new EndedRuns({ ttlMs: 1_000 });
    expect(ended.hasEnded('r')).toBe(false);
    ended.end('r');
    expect(ended.hasEnded('r')).toBe(true);
    expect(ended.hasEnded('other')).toBe(false);
  });

  it('forgets runs after the TTL, dropping expired entries as new ones come', () => {
    let now = 0;
    const ended = new EndedRuns({ ttlMs: 1_000, now: () => now });
    ended.end('a');
    ended.end('b');
    now = 999;
    expect(ended.hasEnded('a')).toBe(true);
    now = 1_000;
    expect(ended.hasEnded('a')).toBe(false);
    ended.end('c');
    expect(ended.size).toBe(1);
  });
});
