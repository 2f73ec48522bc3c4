import { mkdir, mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { newerSource, refuseStaleBuild } from './piece-staleness.ts';

describe('a piece build older than its sources', () => {
  let dir: string;
  const at = (file: string, seconds: number) => utimes(join(dir, file), seconds, seconds);

  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'flowbox-staleness-'));
    await mkdir(join(dir, 'src', 'lib'), { recursive: true });
    await mkdir(join(dir, 'dist'));
    for (const file of ['package.json', 'src/index.ts', 'src/lib/greet.ts', 'dist/piece.tgz']) {
      await writeFile(join(dir, file), 'x');
    }
    for (const file of ['package.json', 'src/index.ts', 'src/lib/greet.ts']) await at(file, 1_000);
    await at('dist/piece.tgz', 2_000);
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('passes a build newer than every source', async () => {
    expect(await newerSource(dir, join(dir, 'dist', 'piece.tgz'))).toBeNull();
    await refuseStaleBuild(dir, join(dir, 'dist', 'piece.tgz'));
  });

  it('names the newest source changed since the build, nested or package.json', async () => {
    await at('src/lib/greet.ts', 3_000);
    await at('package.json', 2_500);
    await expect(refuseStaleBuild(dir, join(dir, 'dist', 'piece.tgz'))).rejects.toMatchObject({
      code: 'PIECE_BUILD_STALE',
      message:
        'dist/piece.tgz (built 1970-01-01T00:33:20.000Z) is older than src/lib/greet.ts (changed 1970-01-01T00:50:00.000Z): build it first (`flowbox piece build`, or `flowbox piece publish --build`); a build that failed leaves the previous archive',
    });
    await at('src/lib/greet.ts', 1_000);
    expect((await newerSource(dir, join(dir, 'dist', 'piece.tgz')))?.file).toBe('package.json');
  });
});
