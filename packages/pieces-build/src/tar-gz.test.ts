import { execFileSync } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createTarGz, readTarGz } from './tar-gz.ts';

const entries = [
  { name: 'manifest.json', data: Buffer.from('{"name":"x"}\n') },
  { name: 'index.mjs', data: Buffer.alloc(1_000, 'a') },
];

describe('createTarGz', () => {
  it('depends only on the entries: same bytes whatever their order', () => {
    expect(createTarGz(entries).equals(createTarGz([...entries].reverse()))).toBe(true);
  });

  it('writes sorted regular files with mode 644 and mtime 0, read back intact', () => {
    const read = readTarGz(createTarGz(entries));
    expect(read.map((e) => [e.name, e.mode, e.mtime, e.data.byteLength])).toEqual([
      ['index.mjs', 0o644, 0, 1_000],
      ['manifest.json', 0o644, 0, 13],
    ]);
    expect(Buffer.from(read[1]?.data ?? []).toString()).toBe('{"name":"x"}\n');
  });

  it('is a standard archive: tar(1) lists it', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'flowbox-tar-'));
    try {
      await writeFile(join(dir, 'a.tgz'), createTarGz(entries));
      const listing = execFileSync('tar', ['-tzf', join(dir, 'a.tgz')], { encoding: 'utf8' });
      expect(listing.trim().split('\n')).toEqual(['index.mjs', 'manifest.json']);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it('refuses names a flat archive should not hold', () => {
    expect(() => createTarGz([{ name: '../escape', data: Buffer.alloc(0) }])).toThrow(/unsupported/);
  });
});
