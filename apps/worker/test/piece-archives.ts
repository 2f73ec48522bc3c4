import { existsSync } from 'node:fs';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';
import { create as tarCreate } from 'tar';
import { extractArchive } from '../src/cache/tar-extract.ts';

const REPO_ROOT = path.resolve(import.meta.dirname, '../../..');

export interface PieceArchive {
  manifest: PieceManifest;
  bytes: Buffer;
}

/** The real piece archives `node scripts/build.ts` writes to packages/piece-*\/dist/piece.tgz. */
export async function builtPieceArchives(): Promise<PieceArchive[]> {
  const packages = path.join(REPO_ROOT, 'packages');
  const files = (await readdir(packages))
    .filter((name) => name.startsWith('piece-'))
    .map((name) => path.join(packages, name, 'dist', 'piece.tgz'));
  const missing = files.filter((file) => !existsSync(file));
  if (missing.length > 0) {
    throw new Error(`piece archives are not built (run \`node scripts/build.ts\`): ${missing.join(', ')}`);
  }
  return Promise.all(files.map(async (file) => readPieceArchive(await readFile(file))));
}

/** The manifest inside an archive, read by unpacking it to a scratch folder. */
export async function readPieceArchive(bytes: Buffer): Promise<PieceArchive> {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowbox-piece-'));
  try {
    await extractArchive(bytes, dir, 'test archive');
    const manifest = PieceManifestSchema.parse(
      JSON.parse(await readFile(path.join(dir, 'manifest.json'), 'utf8')),
    );
    return { manifest, bytes };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A small piece archive made on the spot, laid out like the built ones. */
export async function makePieceArchive(name: string, version: string, source = 'export default {};\n') {
  const dir = await mkdtemp(path.join(tmpdir(), 'flowbox-piece-src-'));
  try {
    const manifest: PieceManifest = { name, version, entry: 'index.mjs', actions: [], triggers: [] };
    await writeFile(path.join(dir, 'manifest.json'), JSON.stringify(manifest));
    await writeFile(path.join(dir, 'index.mjs'), source);
    const chunks: Buffer[] = [];
    const stream = tarCreate({ gzip: true, cwd: dir, portable: true }, ['manifest.json', 'index.mjs']);
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return { manifest, bytes: Buffer.concat(chunks) };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
