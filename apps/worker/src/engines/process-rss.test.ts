import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { describe, expect, it } from 'vitest';
import { createEngineRssReader, readRssBytes, readTreeRssBytes } from './process-rss.ts';

describe('readRssBytes', () => {
  it.runIf(process.platform === 'linux')('reads this process', async () => {
    const rss = await readRssBytes(process.pid);
    expect(rss).toBeGreaterThan(10 * 1024 * 1024);
  });

  it('is undefined for a process that does not exist', async () => {
    expect(await readRssBytes(2 ** 22 + 12_345)).toBeUndefined();
    expect(readTreeRssBytes(2 ** 22 + 12_345)).toBeUndefined();
    expect(await createEngineRssReader()(2 ** 22 + 12_345)).toBeUndefined();
  });

  it.runIf(process.platform === 'linux')('counts the descendants of a process with it', async () => {
    // sh → node holding 64 MB: the tree holds it, sh alone does not. `; exit` keeps sh from
    // exec'ing node in its place; node ends when its stdin (this test's pipe) closes.
    const holder =
      "globalThis.kept = Buffer.alloc(64e6, 1); process.stdin.on('end', () => process.exit(0)).resume(); console.log('held');";
    const child = spawn('sh', ['-c', `"${process.execPath}" -e "${holder}"; exit`], {
      stdio: ['pipe', 'pipe', 'inherit'],
    });
    try {
      await once(child.stdout, 'data');
      const pid = child.pid ?? -1;
      expect(await readRssBytes(pid)).toBeLessThan(32e6);
      expect(readTreeRssBytes(pid)).toBeGreaterThan(64e6);
      // An engine under its launcher is such a line: its node holds the memory, read again
      // from the pid found the first time.
      const readEngineRss = createEngineRssReader();
      expect(await readEngineRss(pid)).toBeGreaterThan(64e6);
      expect(await readEngineRss(pid)).toBeGreaterThan(64e6);
    } finally {
      child.stdin.end();
      await once(child, 'exit');
    }
  });
});
