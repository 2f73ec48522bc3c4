import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { paxRecord, tarGz } from '../../test/piece-archives.ts';
import { checkPieceArchive } from './piece-archive-check.ts';

const LIMITS = { maxBytes: 1024 * 1024, maxUnpackedBytes: 4 * 1024 * 1024 };
const files = async (archive: Buffer) =>
  Object.fromEntries(
    [...(await checkPieceArchive(archive, LIMITS))].map(([name, data]) => [name, data.toString()]),
  );

describe('checkPieceArchive', () => {
  it('reads regular files, skipping directories and normalising ./ paths', async () => {
    const archive = tarGz([
      { name: './', type: '5' },
      { name: './index.mjs', data: 'export default 1;' },
      { name: 'lib/', type: '5' },
      { name: 'lib/util.mjs', data: 'x' },
    ]);
    expect(await files(archive)).toEqual({ 'index.mjs': 'export default 1;', 'lib/util.mjs': 'x' });
  });

  it("takes a pax header's path for the next entry, and checks that path", async () => {
    const long = `${'d/'.repeat(60)}index.mjs`;
    expect(
      await files(
        tarGz([
          { name: 'PaxHeader', type: 'x', data: paxRecord('path', long) },
          { name: 'short', data: 'y' },
        ]),
      ),
    ).toEqual({ [long]: 'y' });
    await expect(
      checkPieceArchive(
        tarGz([
          { name: 'PaxHeader', type: 'x', data: paxRecord('path', '../../x') },
          { name: 'ok', data: 'y' },
        ]),
        LIMITS,
      ),
    ).rejects.toThrow(/"\.\.\/\.\.\/x" \(path contains '\.\.'\)/);
  });

  it("honours a pax header's size as a worker does: an entry hidden in another's data is seen", async () => {
    // The ustar size of `cover.txt` spans a whole second entry; its pax record says 0 bytes, so
    // tar readers that honour pax (node-tar, the worker's) read that second entry as a file.
    const hidden = tarGz([{ name: 'index.mjs', data: 'export default "hidden";' }], {
      end: false,
      gzip: false,
    });
    expect(
      await files(
        tarGz([
          { name: 'index.mjs', data: 'export default "seen";' },
          { name: 'PaxHeader', type: 'x', data: paxRecord('size', '0') },
          { name: 'cover.txt', data: hidden },
        ]),
      ),
    ).toEqual({ 'index.mjs': 'export default "hidden";', 'cover.txt': '' });
  });

  it.each([
    ['a FIFO', [{ name: 'pipe', type: '6' }], /"pipe" \(a FIFO;/],
    ['a contiguous file (type 7)', [{ name: 'c.mjs', type: '7', data: 'x' }], /"c\.mjs" \(a contiguous file/],
    [
      'an entry under a file',
      [
        { name: 'a', data: 'x' },
        { name: 'a/b', type: '5' },
      ],
      /"a\/b" \(under the file "a"\)/,
    ],
    [
      'a file where a directory is',
      [
        { name: 'a/c', data: 'x' },
        { name: 'a', data: 'y' },
      ],
      /"a" \(a file where a directory is\)/,
    ],
  ])('refuses %s', async (_name, entries, message) => {
    await expect(checkPieceArchive(tarGz(entries), LIMITS)).rejects.toMatchObject({
      code: 'INVALID_PIECE',
      message: expect.stringMatching(message),
    });
  });

  it("refuses a name the disk cannot hold as the archive's fault (400), not the host's", async () => {
    await expect(
      checkPieceArchive(
        tarGz([
          { name: 'PaxHeader', type: 'x', data: paxRecord('path', `${'n'.repeat(300)}.mjs`) },
          { name: 'x', data: 'y' },
        ]),
        LIMITS,
      ),
    ).rejects.toMatchObject({ code: 'INVALID_PIECE', message: expect.stringMatching(/ENAMETOOLONG/) });
  });

  it('refuses a gzip of something that is not a tar, and an archive that unpacks past its cap', async () => {
    await expect(checkPieceArchive(gzipSync(Buffer.from('x'.repeat(600))), LIMITS)).rejects.toThrow(
      /not a readable gzip'd tar/,
    );
    const bomb = tarGz([{ name: 'zeros.bin', data: Buffer.alloc(5 * 1024 * 1024) }]);
    expect(bomb.byteLength).toBeLessThan(LIMITS.maxBytes);
    await expect(checkPieceArchive(bomb, LIMITS)).rejects.toThrow(
      /archive too large: past 1000 entries or 4194304 unpacked bytes/,
    );
  });
});
