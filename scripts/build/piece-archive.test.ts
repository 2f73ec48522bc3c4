import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { readTarGz, sha256Hex } from '@flowbox/pieces-build';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PieceManifestSchema } from '../../packages/protocol/src/index.ts';
import { buildPieceArchive, findPiecePackages } from './piece-archive.ts';

const root = resolve(import.meta.dirname, '../..');
const packages = await findPiecePackages(root);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'flowbox-piece-archive-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe.each(packages.map((pkg) => [basename(pkg), pkg]))('piece archive of %s', (name, pkg) => {
  it('builds to the same bytes every time', async () => {
    const first = await buildPieceArchive(pkg, join(dir, name, 'a'));
    const second = await buildPieceArchive(pkg, join(dir, name, 'b'));
    const [a, b] = await Promise.all(
      ['a', 'b'].map(async (out) => sha256Hex(await readFile(join(dir, name, out, 'piece.tgz')))),
    );
    expect(a).toBe(b);
    expect(first.manifest).toEqual(second.manifest);
  });

  it('holds manifest.json and index.mjs, whose default export is the piece its source exports', async () => {
    const { manifest } = await buildPieceArchive(pkg, join(dir, name, 'c'));
    const entries = readTarGz(await readFile(join(dir, name, 'c', 'piece.tgz')));
    expect(entries.map((e) => e.name)).toEqual(['index.mjs', 'manifest.json']);

    const [index, manifestEntry] = entries;
    expect(PieceManifestSchema.parse(JSON.parse(Buffer.from(manifestEntry?.data ?? []).toString()))).toEqual(
      manifest,
    );
    expect(await readFile(join(dir, name, 'c', 'manifest.json'), 'utf8')).toBe(
      Buffer.from(manifestEntry?.data ?? []).toString(),
    );

    // In the package, where its shared imports (zod, the framework) resolve as in an engine.
    const indexFile = join(pkg, `.test-${randomUUID()}.mjs`);
    await writeFile(indexFile, index?.data ?? '');
    const built = await import(pathToFileURL(indexFile).href)
      .then((module: { default: unknown }) => module.default)
      .finally(() => rm(indexFile, { force: true }));
    const source = ((await import(pathToFileURL(join(pkg, 'src/index.ts')).href)) as { default: unknown })
      .default;
    const summary = (piece: unknown) => {
      const p = piece as {
        name: string;
        version: string;
        actions: Map<string, unknown>;
        triggers: Map<string, unknown>;
      };
      return {
        name: p.name,
        version: p.version,
        actions: [...p.actions.keys()],
        triggers: [...p.triggers.keys()],
      };
    };
    expect(summary(built)).toEqual(summary(source));
    const pkgJson = JSON.parse(await readFile(join(pkg, 'package.json'), 'utf8')) as {
      version: string;
      flowbox: { piece: { name: string } };
    };
    expect(manifest).toMatchObject({
      name: pkgJson.flowbox.piece.name,
      version: pkgJson.version,
      entry: 'index.mjs',
    });
  });
});
