import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { tarGz } from '../../test/piece-archives.ts';
import { checkPieceArchive } from './piece-archive-check.ts';

const LIMITS = { maxBytes: 1024 * 1024 };
const files = (archive: Buffer) =>
  Object.fromEntries([...checkPieceArchive(archive, LIMITS)].map(([name, data]) => [name, data.toString()]));

describe('checkPieceArchive', () => {
  it('reads regular files, skipping directories and normalising ./ paths', () => {
    const archive = tarGz([
      { name: './', type: '5' },
      { name: './index.mjs', data: 'export default 1;' },
      { name: 'lib/', type: '5' },
      { name: 'lib/util.mjs', data: 'x' },
    ]);
    expect(files(archive)).toEqual({ 'index.mjs': 'export default 1;', 'lib/util.mjs': 'x' });
  });

  it("takes a pax header's path for the next entry, and checks that path", () => {
    const record = (key: string, value: string) => {
      const body = ` ${key}=${value}\n`;
      let length = body.length + 2;
      if (`${length}${body}`.length !== length) length += 1;
      return `${length}${body}`;
    };
    const long = `${'d/'.repeat(60)}index.mjs`;
    expect(
      files(
        tarGz([
          { name: 'PaxHeader', type: 'x', data: record('path', long) },
          { name: 'short', data: 'y' },
        ]),
      ),
    ).toEqual({
      [long]: 'y',
    });
    expect(() =>
      checkPieceArchive(
        tarGz([
          { name: 'PaxHeader', type: 'x', data: record('path', '../../x') },
          { name: 'ok', data: 'y' },
        ]),
        LIMITS,
      ),
    ).toThrow(/"\.\.\/\.\.\/x": path contains '\.\.'/);
  });

  it('refuses a FIFO, a gzip of something that is not a tar, and a gzip bomb', () => {
    expect(() => checkPieceArchive(tarGz([{ name: 'pipe', type: '6' }]), LIMITS)).toThrow(/"pipe": a FIFO/);
    expect(() => checkPieceArchive(gzipSync(Buffer.from('x'.repeat(600))), LIMITS)).toThrow(/not a tar/);
    expect(() => checkPieceArchive(gzipSync(Buffer.alloc(11 * 1024 * 1024)), LIMITS)).toThrow(
      /unpacks past 10x the cap/,
    );
  });
});
