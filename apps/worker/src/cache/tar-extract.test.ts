import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { Header } from 'tar';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { extractArchive } from './tar-extract.ts';

/** A gzip'd tar written block by block, so it can hold entries no tar tool would write. */
function rawArchive(
  entries: {
    path: string;
    type?: 'File' | 'SymbolicLink' | 'Directory' | 'ContiguousFile';
    body?: string;
    linkpath?: string;
  }[],
) {
  const blocks: Buffer[] = [];
  for (const entry of entries) {
    const body = Buffer.from(entry.body ?? '');
    const header = new Header({
      path: entry.path,
      type: entry.type ?? 'File',
      mode: 0o644,
      size: entry.type === 'SymbolicLink' ? 0 : body.byteLength,
      mtime: new Date(0),
      linkpath: entry.linkpath ?? '',
    });
    const block = Buffer.alloc(512);
    header.encode(block, 0);
    blocks.push(block);
    if (entry.type !== 'SymbolicLink' && body.byteLength > 0) {
      blocks.push(Buffer.concat([body, Buffer.alloc((512 - (body.byteLength % 512)) % 512)]));
    }
  }
  blocks.push(Buffer.alloc(1024));
  return gzipSync(Buffer.concat(blocks));
}

let root: string;
let dir: string;

beforeEach(async () => {
  root = await mkdtemp(path.join(tmpdir(), 'flowbox-tar-'));
  dir = path.join(root, 'out', 'piece');
});

afterEach(async () => {
  await rm(root, { recursive: true, force: true });
});

describe('extractArchive', () => {
  it('unpacks regular files and lists them', async () => {
    const files = await extractArchive(
      rawArchive([
        { path: './manifest.json', body: '{}' },
        { path: 'index.mjs', body: 'export default 1;' },
      ]),
      dir,
      'test archive',
    );
    expect(files.sort()).toEqual(['index.mjs', 'manifest.json']);
    expect(await readFile(path.join(dir, 'index.mjs'), 'utf8')).toBe('export default 1;');
  });

  it.each([
    ['a .. segment', { path: '../escaped.txt', body: 'x' }],
    ['a nested .. segment', { path: 'a/../../escaped.txt', body: 'x' }],
    ['an absolute path', { path: `${'/tmp'}/flowbox-absolute-${process.pid}.txt`, body: 'x' }],
    ['a symlink', { path: 'link', type: 'SymbolicLink' as const, linkpath: '/etc/passwd' }],
  ])('refuses the whole archive for %s, writing nothing outside', async (_name, bad) => {
    const archive = rawArchive([{ path: 'manifest.json', body: '{}' }, bad]);
    await expect(extractArchive(archive, dir, 'piece archive evil@1.0.0')).rejects.toMatchObject({
      code: 'PROVISION_FAILED',
      message: expect.stringMatching(/piece archive evil@1\.0\.0: refused archive entries/),
    });
    expect(await readdir(path.join(root, 'out'))).toEqual(['piece']);
    expect(await readdir(dir)).toEqual(['manifest.json']);
  });

  it.each([
    [
      'a contiguous file (tar type 7)',
      [{ path: 'c.mjs', type: 'ContiguousFile' as const, body: 'x' }],
      /"c\.mjs" \(a contiguous file/,
    ],
    [
      'an entry under a file',
      [
        { path: 'a', body: 'x' },
        { path: 'a/b', type: 'Directory' as const },
      ],
      /"a\/b" \(under the file "a"\)/,
    ],
  ])('refuses %s, as the registry does at publish', async (_name, entries, message) => {
    await expect(extractArchive(rawArchive(entries), dir, 'piece archive odd@1.0.0')).rejects.toMatchObject({
      code: 'PROVISION_FAILED',
      message: expect.stringMatching(message),
    });
  });

  it('fails with PROVISION_FAILED on bytes that are not an archive', async () => {
    await expect(extractArchive(gzipSync(Buffer.from('not a tar at all')), dir, 'x')).rejects.toMatchObject({
      code: 'PROVISION_FAILED',
    });
  });
});
