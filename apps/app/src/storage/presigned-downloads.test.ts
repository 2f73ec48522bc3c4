import { describe, expect, it } from 'vitest';
import { PresignedDownloads } from './presigned-downloads.ts';

describe('PresignedDownloads', () => {
  it('reuses a URL while it stays valid for as long as a job needs, then signs again', async () => {
    let now = 0;
    const signed: Array<[string, number]> = [];
    const downloads = new PresignedDownloads(
      async (key, ttl) => {
        signed.push([key, ttl]);
        return `https://s3.test/${key}?n=${signed.length}`;
      },
      { maxEntries: 10, now: () => now },
    );

    expect(await downloads.url('bundle', 100)).toBe('https://s3.test/bundle?n=1');
    now = 100_000; // exactly 100 s of the 200 s left: still enough
    expect(await downloads.url('bundle', 100)).toBe('https://s3.test/bundle?n=1');
    expect(await downloads.url('piece', 100)).toBe('https://s3.test/piece?n=2');
    now = 100_001;
    expect(await downloads.url('bundle', 100)).toBe('https://s3.test/bundle?n=3');
    expect(signed).toEqual([
      ['bundle', 200],
      ['piece', 200],
      ['bundle', 200],
    ]);
  });

  it('does not keep a failed signature', async () => {
    let fail = true;
    const downloads = new PresignedDownloads(
      async (key) => {
        if (fail) throw new Error('no credentials');
        return `https://s3.test/${key}`;
      },
      { maxEntries: 10 },
    );
    await expect(downloads.url('bundle', 100)).rejects.toThrow('no credentials');
    fail = false;
    expect(await downloads.url('bundle', 100)).toBe('https://s3.test/bundle');
  });

  it('holds at most maxEntries URLs, signing again the least recently used', async () => {
    let count = 0;
    const downloads = new PresignedDownloads(async (key) => `https://s3.test/${key}?n=${++count}`, {
      maxEntries: 2,
    });
    for (const key of ['a', 'b', 'c']) await downloads.url(key, 100);
    expect(downloads.usage()).toEqual({ entries: 2 });
    expect(await downloads.url('c', 100)).toBe('https://s3.test/c?n=3');
    expect(await downloads.url('a', 100)).toBe('https://s3.test/a?n=4');
  });
});
