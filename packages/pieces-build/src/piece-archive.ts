import { randomUUID } from 'node:crypto';
import { readFile, rm, utimes, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { type PieceManifest, PieceManifestSchema } from '@flowbox/protocol';
import { build } from 'esbuild';
import { createTarGz } from './tar-gz.ts';
import { type WrittenFile, writeIfChanged } from './write-if-changed.ts';
import { zodEnglishOnly } from './zod-english-only.ts';

/**
 * What a piece archive leaves out: the engine resolves these imports to its own copies, which
 * it has loaded already, so loading a piece costs only the piece's own code. zod is not among
 * them: pieces declare inputs with the framework's `Property` builders, and a piece that uses
 * zod for itself carries it (a run's isolate provides only the framework).
 */
export const SHARED_PIECE_MODULES = ['@flowbox/pieces-framework'];

interface PiecePackageJson {
  version: string;
  flowbox?: { piece?: { name?: string } };
}

/**
 * `<package>/dist/piece.tgz` (manifest.json + index.mjs, the piece as one ES module whose default
 * export is the piece) and `<package>/dist/manifest.json` beside it. Name and version come from
 * package.json, which the piece's source also reads, so they are written down once.
 */
export async function buildPieceArchive(packageDir: string, outDir = join(packageDir, 'dist')) {
  const pkg = JSON.parse(await readFile(join(packageDir, 'package.json'), 'utf8')) as PiecePackageJson;
  const name = pkg.flowbox?.piece?.name;
  if (name === undefined) throw new Error(`${packageDir}/package.json has no flowbox.piece.name`);

  const result = await build({
    entryPoints: [join(packageDir, 'src/index.ts')],
    bundle: true,
    format: 'esm',
    platform: 'node',
    target: 'node24',
    minifyWhitespace: true,
    minifySyntax: true,
    legalComments: 'none',
    plugins: [zodEnglishOnly],
    // Taken from the engine that loads the piece (apps/engine/src/pieces/shared-piece-modules.ts).
    external: [...SHARED_PIECE_MODULES],
    write: false,
    logLevel: 'warning',
  });
  const [output] = result.outputFiles;
  if (output === undefined || result.outputFiles.length !== 1) {
    throw new Error(`${packageDir} must build to one file, got ${result.outputFiles.length}`);
  }
  const manifest = await describeBuiltPiece(output.contents, packageDir, { name, version: pkg.version });
  const manifestJson = `${JSON.stringify(manifest, null, 2)}\n`;
  const archive = createTarGz([
    { name: 'index.mjs', data: output.contents },
    { name: 'manifest.json', data: Buffer.from(manifestJson, 'utf8') },
  ]);
  const written: WrittenFile[] = [
    await writeIfChanged(join(outDir, 'piece.tgz'), archive),
    await writeIfChanged(join(outDir, 'manifest.json'), manifestJson),
  ];
  // The archive's mtime is when it was last built, its bytes changed or not: `flowbox piece
  // publish` refuses an archive older than the piece's sources (a build that failed since).
  if (written[0]?.changed === false) {
    const now = new Date();
    await utimes(join(outDir, 'piece.tgz'), now, now);
  }
  return { manifest, written };
}

/**
 * Loads the bundle as the engine will (default export) and reads its actions and triggers. It
 * is loaded from a file in the package, so its shared imports resolve to the package's own.
 */
async function describeBuiltPiece(
  code: Uint8Array,
  packageDir: string,
  expected: { name: string; version: string },
): Promise<PieceManifest> {
  const file = join(packageDir, `.describe-${randomUUID()}.mjs`);
  let loaded: unknown;
  try {
    await writeFile(file, code);
    loaded = ((await import(pathToFileURL(file).href)) as { default?: unknown }).default;
  } finally {
    await rm(file, { force: true });
  }
  const piece = loaded as {
    name?: unknown;
    version?: unknown;
    actions?: { keys?: () => Iterable<string> };
    triggers?: {
      keys?: () => Iterable<string>;
      values?: () => Iterable<{ name: string; strategy?: string }>;
    };
  } | null;
  if (piece === null || typeof piece !== 'object' || typeof piece.actions?.keys !== 'function') {
    throw new Error(`piece ${expected.name}: the bundle's default export is not a piece`);
  }
  if (piece.name !== expected.name || piece.version !== expected.version) {
    throw new Error(
      `piece ${expected.name}@${expected.version}: the piece object says ${String(piece.name)}@${String(piece.version)}`,
    );
  }
  return PieceManifestSchema.parse({
    name: expected.name,
    version: expected.version,
    entry: 'index.mjs',
    actions: [...piece.actions.keys()].sort(),
    triggers: [...(piece.triggers?.keys?.() ?? [])].sort(),
    ...pollingOf(piece.triggers?.values?.() ?? []),
  });
}

/** `polling` only for a piece that has polling triggers, so other manifests stay as they were. */
function pollingOf(triggers: Iterable<{ name: string; strategy?: string }>): { polling?: string[] } {
  const polling = [...triggers].filter((t) => t.strategy === 'polling').map((t) => t.name);
  return polling.length === 0 ? {} : { polling: polling.sort() };
}
