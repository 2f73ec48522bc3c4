import { describe, expect, it } from 'vitest';
import { readRssBytes } from './process-rss.ts';

describe('readRssBytes', () => {
  it.runIf(process.platform === 'linux')('reads this process', async () => {
    const rss = await readRssBytes(process.pid);
    expect(rss).toBeGreaterThan(10 * 1024 * 1024);
  });

  it('is undefined for a process that does not exist', async () => {
    expect(await readRssBytes(2 ** 22 + 12_345)).toBeUndefined();
  });
});
