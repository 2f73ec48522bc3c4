import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { BUILT_IN_PIECE_PACKAGES, PieceCatalog } from './piece-catalog.ts';

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

/** A directory laid out like EXTRA_PIECES_DIR, with one built piece per name. */
async function extraPiecesDir(names: string[]): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'flowbox-extra-pieces-'));
  dirs.push(dir);
  for (const name of names) {
    await mkdir(join(dir, name));
    const manifest = { name, version: '0.1.0', entry: 'index.mjs', actions: ['act'], triggers: [] };
    await writeFile(join(dir, name, 'manifest.json'), JSON.stringify(manifest));
    await writeFile(join(dir, name, 'piece.tgz'), 'not read by the catalog');
  }
  await mkdir(join(dir, 'not-a-piece'));
  return dir;
}

describe('piece catalog', () => {
  it('holds exactly the built-in pieces unless EXTRA_PIECES_DIR is set', async () => {
    const catalog = await PieceCatalog.load();
    expect(catalog.all).toHaveLength(BUILT_IN_PIECE_PACKAGES.length);
    expect(catalog.all.map((p) => p.manifest.name).sort()).toEqual(['http', 'math-helper', 'webhook']);
    expect(catalog.get('faults')).toBeUndefined();
  });

  it('adds the built pieces of EXTRA_PIECES_DIR, skipping directories without a manifest', async () => {
    const dir = await extraPiecesDir(['faults']);
    const catalog = await PieceCatalog.load({ extraPiecesDir: dir });
    expect(catalog.all.map((p) => p.manifest.name).sort()).toEqual([
      'faults',
      'http',
      'math-helper',
      'webhook',
    ]);
    expect(catalog.get('faults')?.archivePath).toBe(join(dir, 'faults', 'piece.tgz'));
  });

  it('refuses an extra piece that would replace a built-in one', async () => {
    const dir = await extraPiecesDir(['webhook']);
    await expect(PieceCatalog.load({ extraPiecesDir: dir })).rejects.toThrow(
      /would replace the built-in piece/,
    );
  });

  it('fails the start when EXTRA_PIECES_DIR cannot be read', async () => {
    await expect(PieceCatalog.load({ extraPiecesDir: '/nonexistent/pieces' })).rejects.toThrow(
      /EXTRA_PIECES_DIR/,
    );
  });
});
